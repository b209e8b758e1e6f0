// The CUDA runtime as a GPU device of the plan layer (host/plan/gpu_device.h): a Hopper
// (compute capability 9.0) as the current device, its memory, blocking uploads and the capture
// state of streams.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "host/plan/gpu_device.h"

namespace zyfa::cuda {

class CudaDevice final : public plan::GpuDevice {
 public:
  zyfa_status_t available() override;
  int device_id() override;
  bool per_thread_queue(void* stream) override;
  zyfa_status_t alloc(size_t bytes, void** ptr) override;
  void free(void* ptr) override;
  zyfa_status_t upload(void* dst, const void* src, size_t bytes) override;
  zyfa_status_t capturing(void* stream, bool* out) override;
  // Streaming multiprocessors of the current device (one persistent CTA each); after a
  // successful available().
  int sm_count();

 private:
  struct Info {
    zyfa_status_t status = ZYFA_STATUS_SUCCESS;
    std::string why;  // reason when status != SUCCESS
    int sm_count = 0;
  };
  std::mutex mu_;
  std::map<int, Info> devices_;  // per ordinal, filled by available()
};

// RUNTIME_ERROR (OUT_OF_MEMORY for a failed allocation) naming the call that failed.
zyfa_status_t cuda_fail(int cuda_error, const char* what);

}  // namespace zyfa::cuda
