// Entry points of the Hopper attention kernels, one per shipped instantiation; each lives in
// its own translation unit so that the CUDA build parallelizes and stays small.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/fwd_args.h"
#include "kernels/cuda/fwd_tuning.h"

namespace zyfa::cuda {

enum class FwdVariant { kBf16D128, kBf16D192, kFp8D128, kFp8D192 };

struct FwdLaunch {
  FwdKernelArgs args;
  CUtensorMap tma_q, tma_k, tma_v;
  int grid = 0;  // persistent CTAs (= the job table's G)
  cudaStream_t stream = nullptr;
};

// Shape constants the host needs to build tensor maps and job tables (the same for every
// instantiation; fwd_tuning.h has the rest).
inline constexpr int kFwdBlockM = fwd_tuning(false, 128).block_m;
inline constexpr int kFwdBlockN = fwd_tuning(false, 128).block_n;

cudaError_t launch_fwd_bf16_d128(const FwdLaunch& l);
cudaError_t launch_fwd_bf16_d192(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d128(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d192(const FwdLaunch& l);
// The same kernels for varlen batches and seqlen_k > seqlen (FwdConfig::kAnyLengths).
cudaError_t launch_fwd_bf16_d128_varlen(const FwdLaunch& l);
cudaError_t launch_fwd_bf16_d192_varlen(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d128_varlen(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d192_varlen(const FwdLaunch& l);

// FP8 inputs: vᵀ pre-pass into a workspace of batch * heads_k * 128 * fwd_vt_seqlen_pad(seqlen)
// bytes (varlen: heads_k * 128 * varlen::group_columns(total_k, batch, 128)), read by the
// attention kernel through tma_v.
cudaError_t launch_transpose_v_fp8(const TransposeVArgs& args, cudaStream_t stream);
constexpr int64_t fwd_vt_seqlen_pad(int64_t seqlen) { return (seqlen + 127) / 128 * 128; }

// zyfa_fp8_quantize: three stream-ordered launches (amax, descale, convert).
cudaError_t launch_fp8_quantize(const QuantizeKernelArgs& args, cudaStream_t stream);

}  // namespace zyfa::cuda
