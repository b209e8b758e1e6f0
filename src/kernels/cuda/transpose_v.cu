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
  __shared__ alignas(16) uint8_t tile[kKeys][kD + 4];  // +4: consecutive keys of one d fall in other banks
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
  // All of a thread's loads are issued before its first shared-memory store.
  constexpr int kLoads = kKeys * (kD / 16) / kThreads;
  uint4 x[kLoads];
#pragma unroll
  for (int it = 0; it < kLoads; ++it) {
    const int i = threadIdx.x + it * kThreads, key = i / (kD / 16), part = i % (kD / 16);
    x[it] = key0 + key < seqlen ? *reinterpret_cast<const uint4*>(src + (key0 + key) * a.v_stride_s + part * 16)
                                : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int it = 0; it < kLoads; ++it) {
    const int i = threadIdx.x + it * kThreads, key = i / (kD / 16), part = i % (kD / 16);
    uint32_t* dst = reinterpret_cast<uint32_t*>(&tile[key][part * 16]);
    dst[0] = x[it].x;
    dst[1] = x[it].y;
    dst[2] = x[it].z;
    dst[3] = x[it].w;
  }
  __syncthreads();
  // Store: for one d, 16 permuted keys as one 16-byte vector. A thread takes four consecutive
  // d of one 16-key group: one 32-bit read per key gives that key's bytes for the four d (16
  // reads, where a byte per read took 64), and byte permutes sort them into the four vectors.
  // A warp covers 8 x 4 consecutive d and 4 groups, so each store instruction writes 64
  // contiguous bytes into each of 8 rows of vt.
  static_assert(kD * (kKeys / 16) / 4 == kThreads, "one thread per four d of one key group");
  uint8_t* dst = a.vt + ((dst_batch * a.heads_k + hk) * kD) * a.seqlen_pad + column0 + key0;
  const int g = threadIdx.x % 4 + 4 * (threadIdx.x / 128);  // key group (16 keys)
  const int d0 = 4 * ((threadIdx.x / 4) % 32);              // the first of the thread's four d
  if (key0 + 16 * g < seqlen) {
    uint32_t key_bytes[16];  // key_bytes[k]: bytes d0 .. d0 + 3 of key 16 g + k
#pragma unroll
    for (int k = 0; k < 16; ++k) key_bytes[k] = *reinterpret_cast<const uint32_t*>(&tile[16 * g + k][d0]);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      // Word c of d0 + j: byte j of keys 2c, 2c + 1 (low half) and 2c + 8, 2c + 9 (high half).
      const uint32_t pick = uint32_t(j) | (uint32_t(4 + j) << 4);
      uint32_t w[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const uint32_t lo = __byte_perm(key_bytes[2 * c], key_bytes[2 * c + 1], pick);
        const uint32_t hi = __byte_perm(key_bytes[2 * c + 8], key_bytes[2 * c + 9], pick);
        w[c] = __byte_perm(lo, hi, 0x5410);
      }
      *reinterpret_cast<uint4*>(dst + (d0 + j) * a.seqlen_pad + 16 * g) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

}  // namespace

cudaError_t launch_transpose_v_fp8(const TransposeVArgs& args, cudaStream_t stream) {
  const dim3 grid((args.seqlen + kKeys - 1) / kKeys, args.heads_k, args.batch);
  transpose_v_kernel<<<grid, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
