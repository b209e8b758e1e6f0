// The cuda backend: NVIDIA Hopper (sm_90a). Checks the device, keeps one uploaded job table per
// (device, shape), encodes the bulk-copy tensor maps of each call and launches the kernels of
// src/kernels/cuda. zyfa_fwd never allocates, copies or synchronizes once its shape has been
// prepared, so it can be captured in a CUDA graph.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "host/backend.h"
#include "host/cuda/balanced_jobs.h"
#include "host/cuda/tensor_maps.h"
#include "host/error.h"
#include "host/handle.h"
#include "host/job_table.h"
#include "kernels/cuda/fp8_rotate.h"
#include "kernels/cuda/fwd_launch.h"

namespace zyfa {
namespace {

using cuda::FwdLaunch;

// Work-balanced job tables (balanced_jobs.h); 0 selects the shared builder, for comparison.
#ifndef ZYFA_CUDA_BALANCED_JOBS
#define ZYFA_CUDA_BALANCED_JOBS 1
#endif

#define ZYFA_CUDA_TRY(expr)                              \
  do {                                                   \
    const zyfa_status_t zyfa_status_ = (expr);           \
    if (zyfa_status_ != ZYFA_STATUS_SUCCESS) return zyfa_status_; \
  } while (0)

zyfa_status_t cuda_fail(cudaError_t err, const char* what) {
  const zyfa_status_t status =
      err == cudaErrorMemoryAllocation ? ZYFA_STATUS_OUT_OF_MEMORY : ZYFA_STATUS_RUNTIME_ERROR;
  return fail(status, "backend = cuda: {} failed: {} ({})", what, cudaGetErrorName(err),
              cudaGetErrorString(err));
}

struct DeviceInfo {
  zyfa_status_t status = ZYFA_STATUS_SUCCESS;
  std::string why;  // reason when status != SUCCESS
  int sm_count = 0;
};

// (device, batch, heads, heads_k, seqlen) -> job table in device memory.
using TableKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t>;

// Device scratch of one device queue: the FP8 vᵀ pre-pass output. Calls on one stream run in
// order, so they can share it, one call's launches at a time (the mutex). Streams that are a
// different queue in each thread are keyed per thread (host/handle.h). It only grows, by
// adding a larger buffer; earlier buffers stay allocated until the handle is destroyed, since
// CUDA graphs captured before the growth still point at them.
struct Workspace {
  std::mutex mutex;            // held from the buffer's choice until the call's last launch
  std::vector<void*> buffers;  // the last one is the largest
  size_t bytes = 0;
};
using WorkspaceKey = std::tuple<int, void*, uint64_t>;  // device, stream, scratch_thread() or 0

// cudaStreamPerThread is a different stream in each thread, and so is NULL in a libzyfa built
// with the per-thread default stream (nvcc --default-stream per-thread); both are keyed per
// thread. A legacy NULL stream would be safe to share under the mutex, but keying it per
// thread keeps the rule independent of the build. cudaStreamLegacy and created streams are
// one queue for every thread.
bool per_thread_queue(cudaStream_t stream) { return stream == nullptr || stream == cudaStreamPerThread; }

class CudaBackend final : public Backend {
 public:
  ~CudaBackend() override {
    // The runtime may already be shut down at process exit; errors are irrelevant then.
    for (auto& entry : tables_) cudaFree(entry.second);
    for (auto& entry : workspaces_)
      for (void* b : entry.second.buffers) cudaFree(b);
  }

  zyfa_status_t available() override {
    int device = 0;
    const DeviceInfo* info = nullptr;
    return check_device(&device, &info);
  }

  zyfa_status_t fwd_prepare(const FwdProblem& p) override {
    int device = 0;
    const DeviceInfo* info = nullptr;
    ZYFA_CUDA_TRY(check_device(&device, &info));
    ZYFA_CUDA_TRY(check_supported(p));
    const uint32_t* table = nullptr;
    ZYFA_CUDA_TRY(job_table(p, device, *info, /*allow_upload=*/true, &table));
    void* ws = nullptr;
    std::unique_lock<std::mutex> ws_lock;
    return workspace(p, device, /*allow_alloc=*/true, &ws, &ws_lock);
  }

  zyfa_status_t fwd(const FwdProblem& p) override {
    int device = 0;
    const DeviceInfo* info = nullptr;
    ZYFA_CUDA_TRY(check_device(&device, &info));
    ZYFA_CUDA_TRY(check_supported(p));
    const auto stream = static_cast<cudaStream_t>(p.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
      return cuda_fail(cudaGetLastError(), "cudaStreamIsCapturing");
    }
    const uint32_t* table = nullptr;
    const bool capturing = capture != cudaStreamCaptureStatusNone;
    ZYFA_CUDA_TRY(job_table(p, device, *info, !capturing, &table));
    // Held until both launches are issued: on a stream shared by threads, another call's
    // transpose must not land between this call's transpose and attention kernel.
    void* vt = nullptr;
    std::unique_lock<std::mutex> ws_lock;
    ZYFA_CUDA_TRY(workspace(p, device, !capturing, &vt, &ws_lock));
    const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
    if (fp8) {
      cuda::TransposeVArgs t{};
      t.v = static_cast<const uint8_t*>(p.v.data);
      t.vt = static_cast<uint8_t*>(vt);
      t.v_stride_b = p.v.stride[0];
      t.v_stride_s = p.v.stride[1];
      t.v_stride_h = p.v.stride[2];
      t.seqlen_pad = cuda::fwd_vt_seqlen_pad(p.seqlen);
      t.batch = static_cast<int32_t>(p.batch);
      t.seqlen = static_cast<int32_t>(p.seqlen);
      t.heads_k = static_cast<int32_t>(p.heads_k);
      const cudaError_t err = cuda::launch_transpose_v_fp8(t, stream);
      if (err != cudaSuccess) return cuda_fail(err, "v transpose launch");
    }

    FwdLaunch l{};
    ZYFA_CUDA_TRY(cuda::encode_fwd_tensor_maps(p, vt, &l.tma_q, &l.tma_k, &l.tma_v));
    cuda::FwdKernelArgs& a = l.args;
    a.job_table = table;
    a.out = static_cast<uint16_t*>(p.out.data);
    a.lse = p.lse;
    a.out_stride_b = p.out.stride[0];
    a.out_stride_s = p.out.stride[1];
    a.out_stride_h = p.out.stride[2];
    auto set_descale = [](const Descale& d, const float** ptr, int64_t* sb, int64_t* sh, float* value) {
      *ptr = d.kind == ZYFA_DESCALE_DEVICE ? d.ptr : nullptr;
      *sb = d.stride_batch;
      *sh = d.stride_head_k;
      *value = d.kind == ZYFA_DESCALE_DEVICE ? 1.0f : d.value;
    };
    set_descale(p.q_descale, &a.q_descale_ptr, &a.q_descale_sb, &a.q_descale_sh, &a.q_descale);
    set_descale(p.k_descale, &a.k_descale_ptr, &a.k_descale_sb, &a.k_descale_sh, &a.k_descale);
    set_descale(p.v_descale, &a.v_descale_ptr, &a.v_descale_sb, &a.v_descale_sh, &a.v_descale);
    a.batch = static_cast<int32_t>(p.batch);
    a.seqlen = static_cast<int32_t>(p.seqlen);
    a.heads = static_cast<int32_t>(p.heads);
    a.heads_k = static_cast<int32_t>(p.heads_k);
    a.softmax_scale_log2 = p.softmax_scale * 1.4426950408889634f;
    l.grid = info->sm_count;
    l.stream = stream;

    cudaError_t err;
    if (p.d_qk == 128) {
      err = fp8 ? cuda::launch_fwd_fp8_d128(l) : cuda::launch_fwd_bf16_d128(l);
    } else {
      err = fp8 ? cuda::launch_fwd_fp8_d192(l) : cuda::launch_fwd_bf16_d192(l);
    }
    if (err != cudaSuccess) return cuda_fail(err, "kernel launch");
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p) override {
    int device = 0;
    const DeviceInfo* info = nullptr;
    ZYFA_CUDA_TRY(check_device(&device, &info));
    if (p.transformed()) return fp8_quantize_rotated(p, *info);
    cuda::QuantizeKernelArgs a{};
    a.src = p.src.data;
    a.dst = static_cast<uint8_t*>(p.dst.data);
    a.descale = p.descale;
    for (int i = 0; i < 4; ++i) {
      a.shape[i] = p.shape[i];
      a.src_stride[i] = p.src.stride[i];
      a.dst_stride[i] = p.dst.stride[i];
    }
    a.src_is_fp32 = p.src_dtype == ZYFA_DTYPE_FP32 ? 1 : 0;
    const cudaError_t err = cuda::launch_fp8_quantize(a, static_cast<cudaStream_t>(p.stream));
    if (err != cudaSuccess) return cuda_fail(err, "fp8 quantize launch");
    return ZYFA_STATUS_SUCCESS;
  }

  // The options' kernels (kernels/cuda/fp8_rotate.h). Rows are read and written in whole
  // chunks when every row start allows it.
  zyfa_status_t fp8_quantize_rotated(const QuantizeProblem& p, const DeviceInfo& info) {
    cuda::RotateQuantizeArgs a{};
    a.src = p.src.data;
    a.dst = static_cast<uint8_t*>(p.dst.data);
    a.descale = p.descale;
    a.saturated = p.saturated;
    a.mean = p.smooth_mean;
    for (int i = 0; i < 4; ++i) a.shape[i] = p.shape[i];
    for (int i = 0; i < 3; ++i) {
      a.src_stride[i] = p.src.stride[i];
      a.dst_stride[i] = p.dst.stride[i];
    }
    const int eb = p.src_dtype == ZYFA_DTYPE_FP32 ? 4 : 2;
    a.src_is_fp32 = eb == 4;
    const int64_t sa = cuda::rotate_chunk_align_src(p.shape[3], eb, p.rotation.kind);
    const int64_t da = cuda::rotate_chunk_align_dst(p.shape[3], p.rotation.kind);
    bool vec = reinterpret_cast<uintptr_t>(p.src.data) % sa == 0 && reinterpret_cast<uintptr_t>(p.dst.data) % da == 0;
    for (int i = 0; i < 3; ++i) vec = vec && (p.src.stride[i] * eb) % sa == 0 && p.dst.stride[i] % da == 0;
    a.vector_io = vec ? 1 : 0;
    a.static_descale = p.static_descale;
    a.static_inv = p.static_inv;
    a.rot = p.rotation;
    const cudaError_t err = cuda::launch_fp8_rotate_quantize(a, info.sm_count, static_cast<cudaStream_t>(p.stream));
    if (err != cudaSuccess) return cuda_fail(err, "fp8 quantize (options) launch");
    return ZYFA_STATUS_SUCCESS;
  }

 private:
  // Usable device: present, and a Hopper (compute capability 9.0). Cached per ordinal.
  zyfa_status_t check_device(int* device, const DeviceInfo** info) {
    int count = 0;
    const cudaError_t count_err = cudaGetDeviceCount(&count);
    if (count_err != cudaSuccess || count == 0) {
      cudaGetLastError();  // reset the runtime's last-error state
      return fail(ZYFA_STATUS_NO_DEVICE, "backend = cuda: no usable CUDA device ({})",
                  count_err == cudaSuccess ? "cudaGetDeviceCount found 0 devices"
                                           : cudaGetErrorString(count_err));
    }
    cudaError_t err = cudaGetDevice(device);
    if (err != cudaSuccess) return cuda_fail(err, "cudaGetDevice");
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = devices_.find(*device);
    if (it == devices_.end()) {
      DeviceInfo d;
      cudaDeviceProp prop{};
      err = cudaGetDeviceProperties(&prop, *device);
      if (err != cudaSuccess) return cuda_fail(err, "cudaGetDeviceProperties");
      if (prop.major != 9 || prop.minor != 0) {
        d.status = ZYFA_STATUS_NOT_SUPPORTED;
        d.why = fmt::format(
            "backend = cuda: device {} ({}) has compute capability {}.{}; the kernels need a Hopper "
            "GPU (9.0, sm_90a)",
            *device, prop.name, prop.major, prop.minor);
      }
      d.sm_count = prop.multiProcessorCount;
      it = devices_.emplace(*device, d).first;
    }
    *info = &it->second;
    if (it->second.status != ZYFA_STATUS_SUCCESS) return set_error(it->second.status, it->second.why);
    return ZYFA_STATUS_SUCCESS;
  }

  static zyfa_status_t check_supported(const FwdProblem& p) {
    // The kernels index with 32-bit rows and heads; validation already bounds the sizes.
    if (p.seqlen > (int64_t{1} << 30) || p.heads > (int64_t{1} << 20) || p.batch > (int64_t{1} << 20)) {
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = cuda: batch = {}, seqlen = {}, heads = {}: above the kernel's 32-bit indexing",
                  p.batch, p.seqlen, p.heads);
    }
    return cuda::check_tensor_maps_supported(p);
  }

  zyfa_status_t job_table(const FwdProblem& p, int device, const DeviceInfo& info, bool allow_upload,
                          const uint32_t** out) {
    const TableKey key{device, p.batch, p.heads, p.heads_k, p.seqlen};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = tables_.find(key);
    if (it != tables_.end()) {
      *out = it->second;
      return ZYFA_STATUS_SUCCESS;
    }
    if (!allow_upload) {
      return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                  "desc->stream = {}: the stream is capturing a CUDA graph, but this shape (batch {}, "
                  "seqlen {}, heads {}, heads_k {}) was not prepared; call zyfa_fwd_prepare with the "
                  "same descriptor before the capture",
                  p.stream, p.batch, p.seqlen, p.heads, p.heads_k);
    }
    JobTableParams params;
    params.batch = p.batch;
    params.heads = p.heads;
    params.heads_k = p.heads_k;
    params.seqlen = p.seqlen;
    params.tile_rows = cuda::kFwdBlockM;
    params.grid = info.sm_count;
    params.num_xcds = 1;
    JobTable table;
#if ZYFA_CUDA_BALANCED_JOBS
    const bool built = cuda::build_balanced_job_table(params, &table);
#else
    const bool built = build_job_table(params, &table);
#endif
    if (!built) {
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = cuda: batch {} x heads {} x seqlen {} gives more query tiles than a job "
                  "table indexes",
                  p.batch, p.heads, p.seqlen);
    }
    void* dev = nullptr;
    cudaError_t err = cudaMalloc(&dev, table.bytes());
    if (err != cudaSuccess) return cuda_fail(err, "cudaMalloc (job table)");
    err = cudaMemcpy(dev, table.words.data(), table.bytes(), cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
      cudaFree(dev);
      return cuda_fail(err, "cudaMemcpy (job table)");
    }
    tables_.emplace(key, static_cast<uint32_t*>(dev));
    *out = static_cast<uint32_t*>(dev);
    return ZYFA_STATUS_SUCCESS;
  }

  // The FP8 vᵀ scratch of p's queue (nothing for BF16), grown on demand when allowed, and
  // locked into `hold` for the caller's launches.
  zyfa_status_t workspace(const FwdProblem& p, int device, bool allow_alloc, void** out,
                          std::unique_lock<std::mutex>* hold) {
    *out = nullptr;
    if (p.in_dtype != ZYFA_DTYPE_FP8_E4M3) return ZYFA_STATUS_SUCCESS;
    const size_t need = static_cast<size_t>(p.batch) * static_cast<size_t>(p.heads_k) *
                        static_cast<size_t>(p.d_v) * static_cast<size_t>(cuda::fwd_vt_seqlen_pad(p.seqlen));
    const auto stream = static_cast<cudaStream_t>(p.stream);
    const WorkspaceKey key{device, p.stream, per_thread_queue(stream) ? scratch_thread() : 0};
    Workspace* entry = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entry = &workspaces_[key];  // node-based map: the entry never moves
    }
    std::unique_lock<std::mutex> lock(entry->mutex);
    Workspace& w = *entry;
    if (w.bytes < need) {
      if (!allow_alloc) {
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "desc->stream = {}: the stream is capturing a CUDA graph, but its FP8 workspace was not "
                    "prepared for this shape (batch {}, seqlen {}, heads_k {}); call zyfa_fwd_prepare with the "
                    "same descriptor before the capture",
                    p.stream, p.batch, p.seqlen, p.heads_k);
      }
      void* buf = nullptr;
      const cudaError_t err = cudaMalloc(&buf, need);
      if (err != cudaSuccess) return cuda_fail(err, "cudaMalloc (FP8 v workspace)");
      w.buffers.push_back(buf);
      w.bytes = need;
    }
    *out = w.buffers.back();
    *hold = std::move(lock);
    return ZYFA_STATUS_SUCCESS;
  }

  std::mutex mutex_;
  std::map<int, DeviceInfo> devices_;
  std::map<WorkspaceKey, Workspace> workspaces_;
  std::map<TableKey, uint32_t*> tables_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace zyfa
