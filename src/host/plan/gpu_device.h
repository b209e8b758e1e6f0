// What the launch-plan layer needs from any GPU runtime (HIP, CUDA, the gfx950 emulator):
// which device the calls address, its memory, a blocking upload, and whether a stream is
// capturing a graph. Launching stays with each architecture (amd::AmdDevice, the cuda entry
// points), since a launch's form differs between them.
#pragma once

#include <cstddef>

#include "zyfa/zyfa.h"

namespace zyfa::plan {

class GpuDevice {
 public:
  virtual ~GpuDevice() = default;
  // SUCCESS if a device this build's kernels run on is current; else a status and a message.
  virtual zyfa_status_t available() = 0;
  // Which device the next calls address (HIP, CUDA: the current device). Everything the plan
  // cache holds is per device. A single-device implementation keeps the default.
  virtual int device_id() { return 0; }
  // Whether `stream` names a different device queue in each host thread (HIP, CUDA: NULL and
  // the per-thread stream; emu: every stream, since a launch runs on the calling thread).
  // Scratch of such a queue is kept per thread (host/handle.h). The default is always safe.
  virtual bool per_thread_queue(void* /*stream*/) { return true; }
  // Device memory owned by the plan cache, freed with free().
  virtual zyfa_status_t alloc(size_t bytes, void** ptr) = 0;
  virtual void free(void* ptr) = 0;
  // Host-to-device copy, complete when it returns: a job table is uploaded once and then read
  // from any stream, so no stream may see it half written.
  virtual zyfa_status_t upload(void* dst, const void* src, size_t bytes) = 0;
  // Whether `stream` is capturing a graph (then nothing may be allocated or uploaded).
  // Devices without graphs keep the default.
  virtual zyfa_status_t capturing(void* /*stream*/, bool* out) {
    *out = false;
    return ZYFA_STATUS_SUCCESS;
  }
};

}  // namespace zyfa::plan
