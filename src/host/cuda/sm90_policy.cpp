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
#include "kernels/cuda/varlen_jobs.h"

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
    if (p.varlen()) {
      // The device builder's table must fit 32-bit job indices and a 32-bit byte size; the
      // vᵀ pre-pass has one grid row per sequence.
      const varlen::Shape s = varlen_shape(p);
      if (p.batch > 65535 || varlen::table_words(s) > (uint64_t{1} << 29)) {
        return fail(ZYFA_STATUS_NOT_SUPPORTED,
                    "backend = cuda: desc->varlen_batch = {} with max_seqlen_q = {} and {} heads: above the varlen "
                    "job table's limits (65535 sequences, 2^28 jobs)",
                    p.batch, p.seqlen, p.heads);
      }
    }
    return check_tensor_maps_supported(p);
  }

  // The varlen job table's shape: the call's maxima and sizes, never a length.
  varlen::Shape varlen_shape(const FwdProblem& p) const {
    varlen::Shape s{};
    s.batch = static_cast<int32_t>(p.batch);
    s.heads = static_cast<int32_t>(p.heads);
    s.tile_rows = kFwdBlockM;
    s.block_n = kFwdBlockN;
    s.max_q = static_cast<int32_t>(p.seqlen);
    s.max_k = static_cast<int32_t>(p.seqlen_k);
    s.total_q = p.total_q;
    s.total_k = p.total_k;
    s.grid = device_->sm_count();
    return s;
  }

  // Varlen workspace: the job table and its builder's scratch, then (FP8) vᵀ.
  struct VarlenWorkspace {
    size_t table = 0, builder = 0, vt = 0, bytes = 0;
  };
  VarlenWorkspace varlen_workspace(const FwdProblem& p) const {
    const auto align = [](size_t x) { return (x + 255) / 256 * 256; };
    const varlen::Shape s = varlen_shape(p);
    VarlenWorkspace w;
    w.builder = align(varlen::table_words(s) * sizeof(uint32_t));
    w.vt = w.builder + align(varlen_job_workspace_bytes(s));
    w.bytes = w.vt + (p.in_dtype == ZYFA_DTYPE_FP8_E4M3 ? fwd_vt_bytes(p) : 0);
    return w;
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

  // FP8: the vᵀ pre-pass output; BF16 reads v in place. Varlen: the job table as well.
  size_t workspace_bytes(const FwdProblem& p) override {
    if (p.varlen()) return varlen_workspace(p).bytes;
    return p.in_dtype == ZYFA_DTYPE_FP8_E4M3 ? fwd_vt_bytes(p) : 0;
  }

  zyfa_status_t launch_fwd(const FwdProblem& p, const plan::FwdResources& r) override {
    const auto stream = static_cast<cudaStream_t>(p.stream);
    const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
    char* const workspace = static_cast<char*>(r.workspace);
    const uint32_t* table = static_cast<const uint32_t*>(r.table.device);
    void* vt = workspace;
    int grid = 0;
    if (p.varlen()) {
      // The table is built on the device from cu_seqlens, on the call's stream.
      const VarlenWorkspace w = varlen_workspace(p);
      VarlenJobArgs j{};
      j.cu_seqlens_q = p.cu_seqlens_q;
      j.cu_seqlens_k = p.cu_seqlens_k;
      j.workspace = workspace + w.builder;
      j.table = reinterpret_cast<uint32_t*>(workspace);
      j.shape = varlen_shape(p);
      if (const cudaError_t err = launch_varlen_job_table(j, stream); err != cudaSuccess)
        return cuda_fail(err, "varlen job table launch");
      table = j.table;
      vt = workspace + w.vt;
      grid = j.shape.grid;
    } else {
      grid = static_cast<int>(r.table.table->grid());
    }
    if (fp8) {
      TransposeVArgs t{};
      t.v = static_cast<const uint8_t*>(p.v.data);
      t.vt = static_cast<uint8_t*>(vt);
      t.v_stride_b = p.v.stride[0];
      t.v_stride_s = p.v.stride[1];
      t.v_stride_h = p.v.stride[2];
      t.seqlen_pad = fwd_vt_columns(p);
      t.batch = static_cast<int32_t>(p.batch);
      t.seqlen = static_cast<int32_t>(p.seqlen_k);
      t.heads_k = static_cast<int32_t>(p.heads_k);
      t.cu_seqlens_k = p.cu_seqlens_k;
      t.total_k = p.total_k;
      const cudaError_t err = launch_transpose_v_fp8(t, stream);
      if (err != cudaSuccess) return cuda_fail(err, "v transpose launch");
    }

    FwdLaunch l{};
    if (zyfa_status_t s = encode_fwd_tensor_maps(p, vt, &l.tma_q, &l.tma_k, &l.tma_v); s != ZYFA_STATUS_SUCCESS)
      return s;
    FwdKernelArgs& a = l.args;
    a.job_table = table;
    a.out = static_cast<uint16_t*>(p.out.data);
    a.lse = p.lse;
    for (int i = 0; i < 3; ++i) a.o_stride[i] = p.out.stride[i];
    plan::set_descales(p, &a, [](const float* ptr) { return ptr; });
    a.batch = static_cast<int32_t>(p.batch);
    a.seqlen = static_cast<int32_t>(p.seqlen);
    a.seqlen_k = static_cast<int32_t>(p.seqlen_k);
    a.heads = static_cast<int32_t>(p.heads);
    a.heads_k = static_cast<int32_t>(p.heads_k);
    a.scale_log2 = plan::scale_log2(p.softmax_scale);
    a.cu_seqlens_q = p.cu_seqlens_q;
    a.cu_seqlens_k = p.cu_seqlens_k;
    a.total_q = p.total_q;
    a.total_k = p.total_k;
    // LSE (batch, heads, seqlen), or varlen (heads, total_q).
    a.lse_stride[0] = p.varlen() ? 0 : p.heads * p.seqlen;
    a.lse_stride[1] = p.varlen() ? p.total_q : p.seqlen;
    l.grid = grid;
    l.stream = stream;

    // Fixed-length causal calls keep the kernels without the lengths' code.
    const bool lengths = p.varlen() || p.seqlen_k != p.seqlen;
    cudaError_t err;
    if (p.d_qk == 128) {
      err = fp8 ? (lengths ? launch_fwd_fp8_d128_varlen(l) : launch_fwd_fp8_d128(l))
                : (lengths ? launch_fwd_bf16_d128_varlen(l) : launch_fwd_bf16_d128(l));
    } else {
      err = fp8 ? (lengths ? launch_fwd_fp8_d192_varlen(l) : launch_fwd_fp8_d192(l))
                : (lengths ? launch_fwd_bf16_d192_varlen(l) : launch_fwd_bf16_d192(l));
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
