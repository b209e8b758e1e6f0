// The sm90 policy of the plan layer and make_cuda_backend(): NVIDIA Hopper (sm_90a) kernels of
// src/kernels/cuda, with the bulk-copy tensor maps encoded for each call. With the plan cache's
// capture rule (host/plan/plan_cache.h), zyfa_fwd never allocates, copies or synchronizes once
// its shape has been prepared, so it can be captured in a CUDA graph.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>

#include "host/backend.h"
#include "host/cuda/cuda_device.h"
#include "host/cuda/tensor_maps.h"
#include "host/error.h"
#include "host/plan/gpu_backend.h"
#include "host/plan/kernel_args.h"
#include "kernels/cuda/fp8_rotate.h"
#include "kernels/cuda/fwd_launch.h"

namespace zyfa {
namespace cuda {
namespace {

class Sm90Policy final : public plan::ArchPolicy {
 public:
  explicit Sm90Policy(CudaDevice* device) : device_(device) {}

  zyfa_status_t can_run(const FwdProblem& p) override {
    // The kernels index with 32-bit rows and heads; validation already bounds the sizes.
    if (p.seqlen > (int64_t{1} << 30) || p.heads > (int64_t{1} << 20) || p.batch > (int64_t{1} << 20)) {
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = cuda: batch = {}, seqlen = {}, heads = {}: above the kernel's 32-bit indexing", p.batch,
                  p.seqlen, p.heads);
    }
    return check_tensor_maps_supported(p);
  }

  // One persistent CTA per SM, jobs balanced by work.
  JobTableParams job_table_params(const FwdProblem& p) override {
    JobTableParams params;
    params.batch = p.batch;
    params.heads = p.heads;
    params.heads_k = p.heads_k;
    params.seqlen = p.seqlen;
    params.tile_rows = kFwdBlockM;
    params.grid = device_->sm_count();
    params.num_xcds = 1;
    params.schedule = JobSchedule::kBalancedWork;
    return params;
  }

  // FP8: the vᵀ pre-pass output; BF16 reads v in place.
  size_t workspace_bytes(const FwdProblem& p) override {
    if (p.in_dtype != ZYFA_DTYPE_FP8_E4M3) return 0;
    return static_cast<size_t>(p.batch) * static_cast<size_t>(p.heads_k) * static_cast<size_t>(p.d_v) *
           static_cast<size_t>(fwd_vt_seqlen_pad(p.seqlen));
  }

  zyfa_status_t launch_fwd(const FwdProblem& p, const plan::FwdResources& r) override {
    const auto stream = static_cast<cudaStream_t>(p.stream);
    const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
    if (fp8) {
      TransposeVArgs t{};
      t.v = static_cast<const uint8_t*>(p.v.data);
      t.vt = static_cast<uint8_t*>(r.workspace);
      t.v_stride_b = p.v.stride[0];
      t.v_stride_s = p.v.stride[1];
      t.v_stride_h = p.v.stride[2];
      t.seqlen_pad = fwd_vt_seqlen_pad(p.seqlen);
      t.batch = static_cast<int32_t>(p.batch);
      t.seqlen = static_cast<int32_t>(p.seqlen);
      t.heads_k = static_cast<int32_t>(p.heads_k);
      const cudaError_t err = launch_transpose_v_fp8(t, stream);
      if (err != cudaSuccess) return cuda_fail(err, "v transpose launch");
    }

    FwdLaunch l{};
    if (zyfa_status_t s = encode_fwd_tensor_maps(p, r.workspace, &l.tma_q, &l.tma_k, &l.tma_v);
        s != ZYFA_STATUS_SUCCESS)
      return s;
    FwdKernelArgs& a = l.args;
    a.job_table = static_cast<const uint32_t*>(r.table.device);
    a.out = static_cast<uint16_t*>(p.out.data);
    a.lse = p.lse;
    for (int i = 0; i < 3; ++i) a.o_stride[i] = p.out.stride[i];
    plan::set_descales(p, &a, [](const float* ptr) { return ptr; });
    a.batch = static_cast<int32_t>(p.batch);
    a.seqlen = static_cast<int32_t>(p.seqlen);
    a.heads = static_cast<int32_t>(p.heads);
    a.heads_k = static_cast<int32_t>(p.heads_k);
    a.scale_log2 = plan::scale_log2(p.softmax_scale);
    l.grid = static_cast<int>(r.table.table->grid());
    l.stream = stream;

    cudaError_t err;
    if (p.d_qk == 128) {
      err = fp8 ? launch_fwd_fp8_d128(l) : launch_fwd_bf16_d128(l);
    } else {
      err = fp8 ? launch_fwd_fp8_d192(l) : launch_fwd_bf16_d192(l);
    }
    if (err != cudaSuccess) return cuda_fail(err, "kernel launch");
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p, plan::PlanCache&) override {
    if (p.transformed()) return fp8_quantize_rotated(p);
    QuantizeKernelArgs a{};
    a.src = p.src.data;
    a.dst = static_cast<uint8_t*>(p.dst.data);
    a.descale = p.descale;
    for (int i = 0; i < 4; ++i) {
      a.shape[i] = p.shape[i];
      a.src_stride[i] = p.src.stride[i];
      a.dst_stride[i] = p.dst.stride[i];
    }
    a.src_is_fp32 = p.src_dtype == ZYFA_DTYPE_FP32 ? 1 : 0;
    const cudaError_t err = launch_fp8_quantize(a, static_cast<cudaStream_t>(p.stream));
    if (err != cudaSuccess) return cuda_fail(err, "fp8 quantize launch");
    return ZYFA_STATUS_SUCCESS;
  }

  // The options' kernels (kernels/cuda/fp8_rotate.h). Rows are read and written in whole
  // chunks when every row start allows it.
  zyfa_status_t fp8_quantize_rotated(const QuantizeProblem& p) {
    RotateQuantizeArgs a{};
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
    const int64_t sa = rotate_chunk_align_src(p.shape[3], eb, p.rotation.kind);
    const int64_t da = rotate_chunk_align_dst(p.shape[3], p.rotation.kind);
    bool vec = reinterpret_cast<uintptr_t>(p.src.data) % sa == 0 && reinterpret_cast<uintptr_t>(p.dst.data) % da == 0;
    for (int i = 0; i < 3; ++i) vec = vec && (p.src.stride[i] * eb) % sa == 0 && p.dst.stride[i] % da == 0;
    a.vector_io = vec ? 1 : 0;
    a.static_descale = p.static_descale;
    a.static_inv = p.static_inv;
    a.rot = p.rotation;
    const cudaError_t err = launch_fp8_rotate_quantize(a, device_->sm_count(), static_cast<cudaStream_t>(p.stream));
    if (err != cudaSuccess) return cuda_fail(err, "fp8 quantize (options) launch");
    return ZYFA_STATUS_SUCCESS;
  }

 private:
  CudaDevice* device_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend() {
  auto device = std::make_unique<cuda::CudaDevice>();
  cuda::CudaDevice* raw = device.get();
  return plan::make_gpu_backend(std::move(device), std::make_unique<cuda::Sm90Policy>(raw), "cuda");
}

}  // namespace zyfa
