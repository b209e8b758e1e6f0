// Entry points of the Hopper attention kernels, one per shipped instantiation; each lives in
// its own translation unit so that the CUDA build parallelizes and stays small.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/fwd_args.h"

namespace zyfa::cuda {

enum class FwdVariant { kBf16D128, kBf16D192, kFp8D128, kFp8D192 };

struct FwdLaunch {
  FwdKernelArgs args;
  CUtensorMap tma_q, tma_k, tma_v;
  int grid = 0;  // persistent CTAs (= the job table's G)
  cudaStream_t stream = nullptr;
};

// Shape constants the host needs to build tensor maps and job tables.
inline constexpr int kFwdBlockM = 128;
inline constexpr int kFwdBlockN = 128;
// Column chunk (elements) of one q/k TMA box: 128-byte rows where the head dim is a multiple
// of 128 bytes' worth of elements, else 64 elements (FP8 d_qk = 192: 64-byte rows).
#ifndef ZYFA_CUDA_FP8_WIDE_CHUNK
#define ZYFA_CUDA_FP8_WIDE_CHUNK 1
#endif
constexpr int fwd_qk_chunk(bool fp8, int d_qk) {
  return (fp8 && ZYFA_CUDA_FP8_WIDE_CHUNK && d_qk % 128 == 0) ? 128 : 64;
}

cudaError_t launch_fwd_bf16_d128(const FwdLaunch& l);
cudaError_t launch_fwd_bf16_d192(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d128(const FwdLaunch& l);
cudaError_t launch_fwd_fp8_d192(const FwdLaunch& l);

// FP8 inputs: vᵀ pre-pass into a workspace of batch * heads_k * 128 * fwd_vt_seqlen_pad(seqlen)
// bytes, read by the attention kernel through tma_v.
cudaError_t launch_transpose_v_fp8(const TransposeVArgs& args, cudaStream_t stream);
constexpr int64_t fwd_vt_seqlen_pad(int64_t seqlen) { return (seqlen + 127) / 128 * 128; }

// zyfa_fp8_quantize: three stream-ordered launches (amax, descale, convert).
cudaError_t launch_fp8_quantize(const QuantizeKernelArgs& args, cudaStream_t stream);

}  // namespace zyfa::cuda
