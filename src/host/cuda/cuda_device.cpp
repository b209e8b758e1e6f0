#include "host/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include "host/error.h"

namespace zyfa::cuda {

zyfa_status_t cuda_fail(int cuda_error, const char* what) {
  const auto err = static_cast<cudaError_t>(cuda_error);
  const zyfa_status_t status =
      err == cudaErrorMemoryAllocation ? ZYFA_STATUS_OUT_OF_MEMORY : ZYFA_STATUS_RUNTIME_ERROR;
  return fail(status, "backend = cuda: {} failed: {} ({})", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

// Usable device: present, and a Hopper (compute capability 9.0). Cached per ordinal.
zyfa_status_t CudaDevice::available() {
  int count = 0;
  const cudaError_t count_err = cudaGetDeviceCount(&count);
  if (count_err != cudaSuccess || count == 0) {
    cudaGetLastError();  // reset the runtime's last-error state
    return fail(ZYFA_STATUS_NO_DEVICE, "backend = cuda: no usable CUDA device ({})",
                count_err == cudaSuccess ? "cudaGetDeviceCount found 0 devices" : cudaGetErrorString(count_err));
  }
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_fail(err, "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = devices_.find(device);
  if (it == devices_.end()) {
    Info d;
    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, device);
    if (err != cudaSuccess) return cuda_fail(err, "cudaGetDeviceProperties");
    if (prop.major != 9 || prop.minor != 0) {
      d.status = ZYFA_STATUS_NOT_SUPPORTED;
      d.why = fmt::format(
          "backend = cuda: device {} ({}) has compute capability {}.{}; the kernels need a Hopper GPU (9.0, sm_90a)",
          device, prop.name, prop.major, prop.minor);
    }
    d.sm_count = prop.multiProcessorCount;
    it = devices_.emplace(device, d).first;
  }
  if (it->second.status != ZYFA_STATUS_SUCCESS) return set_error(it->second.status, it->second.why);
  return ZYFA_STATUS_SUCCESS;
}

int CudaDevice::device_id() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  return device;
}

int CudaDevice::sm_count() {
  const int device = device_id();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = devices_.find(device);
  return it == devices_.end() ? 0 : it->second.sm_count;
}

// cudaStreamPerThread is a different stream in each thread, and so is NULL in a libzyfa built
// with the per-thread default stream (nvcc --default-stream per-thread); both are keyed per
// thread. A legacy NULL stream would be safe to share under the mutex, but keying it per
// thread keeps the rule independent of the build. cudaStreamLegacy and created streams are
// one queue for every thread.
bool CudaDevice::per_thread_queue(void* stream) {
  return stream == nullptr || static_cast<cudaStream_t>(stream) == cudaStreamPerThread;
}

zyfa_status_t CudaDevice::alloc(size_t bytes, void** ptr) {
  if (cudaError_t err = cudaMalloc(ptr, bytes); err != cudaSuccess) return cuda_fail(err, "cudaMalloc");
  return ZYFA_STATUS_SUCCESS;
}

// The runtime may already be shut down at process exit; errors are irrelevant then.
void CudaDevice::free(void* ptr) { cudaFree(ptr); }

zyfa_status_t CudaDevice::upload(void* dst, const void* src, size_t bytes) {
  if (cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice); err != cudaSuccess)
    return cuda_fail(err, "cudaMemcpy (job table)");
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t CudaDevice::capturing(void* stream, bool* out) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture) != cudaSuccess)
    return cuda_fail(cudaGetLastError(), "cudaStreamIsCapturing");
  *out = capture != cudaStreamCaptureStatusNone;
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa::cuda
