// FP8 v pre-pass of the Hopper kernels (see TransposeVArgs): FP8 wgmma reads both operands
// K-major, so P·v needs vᵀ with keys contiguous. Transposing once per call here costs one read
// and one write of v, instead of every CTA transposing every v block it uses in the kernel.
#include <cstdint>

#include "kernels/cuda/fwd_launch.h"
#include "kernels/varlen/varlen_jobs.h"

namespace zyfa::cuda {
namespace {

constexpr int kKeys = 128, kD = 128, kThreads = 256;

__global__ void __launch_bounds__(kThreads) transpose_v_kernel(const __grid_constant__ TransposeVArgs a) {
  __shared__ uint8_t tile[kKeys][kD + 4];  // +4: consecutive keys of one d fall in other banks
  const int key0 = blockIdx.x * kKeys;
  const int hk = blockIdx.y, b = blockIdx.z;
  // This block's sequence: its keys' first row of v, first column of vᵀ and length.
  int64_t row0 = 0, column0 = 0, dst_batch = b;
  int seqlen = a.seqlen;
  if (a.cu_seqlens_k != nullptr) {
    const varlen::Span keys = varlen::span_at(a.cu_seqlens_k, b, a.total_k, a.seqlen);
    row0 = keys.start;
    column0 = varlen::group_first_column(b, keys.start);
    dst_batch = 0;
    seqlen = keys.length;
    if (key0 >= seqlen) return;
  }
  const uint8_t* src = a.v + (a.cu_seqlens_k != nullptr ? row0 * a.v_stride_s : b * a.v_stride_b) + hk * a.v_stride_h;
  // Load: 16-byte vectors along d. Keys past seqlen become zeros: the key permutation moves
  // them into columns below seqlen of their 16-key group, which the kernel reads (their
  // probabilities are 0, and 0 times a NaN code would not be).
  for (int i = threadIdx.x; i < kKeys * (kD / 16); i += kThreads) {
    const int key = i / (kD / 16), part = i % (kD / 16);
    uint4 x = make_uint4(0, 0, 0, 0);
    if (key0 + key < seqlen) {
      x = *reinterpret_cast<const uint4*>(src + (key0 + key) * a.v_stride_s + part * 16);
    }
    uint32_t* dst = reinterpret_cast<uint32_t*>(&tile[key][part * 16]);
    dst[0] = x.x;
    dst[1] = x.y;
    dst[2] = x.z;
    dst[3] = x.w;
  }
  __syncthreads();
  // Store: for one d, 16 permuted keys as one 16-byte vector.
  uint8_t* dst = a.vt + ((dst_batch * a.heads_k + hk) * kD) * a.seqlen_pad + column0 + key0;
  for (int i = threadIdx.x; i < kD * (kKeys / 16); i += kThreads) {
    const int d = i / (kKeys / 16), g = i % (kKeys / 16);
    if (key0 + 16 * g >= seqlen) continue;
    uint32_t w[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int k = 16 * g + 2 * c;
      w[c] = static_cast<uint32_t>(tile[k][d]) | (static_cast<uint32_t>(tile[k + 1][d]) << 8) |
             (static_cast<uint32_t>(tile[k + 8][d]) << 16) | (static_cast<uint32_t>(tile[k + 9][d]) << 24);
    }
    *reinterpret_cast<uint4*>(dst + d * a.seqlen_pad + 16 * g) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace

cudaError_t launch_transpose_v_fp8(const TransposeVArgs& args, cudaStream_t stream) {
  const dim3 grid((args.seqlen + kKeys - 1) / kKeys, args.heads_k, args.batch);
  transpose_v_kernel<<<grid, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
