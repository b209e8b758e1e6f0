// Kernel arguments of the gfx950 attention kernels (attn_fwd_{bf16,fp8}_d{128,192}, and the
// generated attn_fwd_fp8_d128).
#pragma once

#include "fast_division.h"
#include "kernel_args_common.h"

namespace zyfa::kernels {

// Work split of the baseline kernels: a workgroup of 4 waves takes a query tile of 128 rows,
// 32 rows per wave (one 32x32 MFMA block of transposed scores).
inline constexpr int kAttnWaves = 4;
inline constexpr int kAttnWaveRows = 32;
inline constexpr int kAttnTileRows = kAttnWaves * kAttnWaveRows;
inline constexpr int kAttnThreads = kAttnWaves * 64;

struct ZYFA_KERNEL_ARGS AttnFwdArgs {
  uint64_t q;          // device address of element (0,0,0,0)
  uint64_t k;
  uint64_t v;
  uint64_t out;        // BF16
  uint64_t lse;        // float (batch, heads, seqlen) contiguous; 0 = not requested
  uint64_t job_table;  // uint32 words, host/job_table.h
  uint64_t q_descale_ptr;  // float32 per (batch, head_k); 0 = use the host value below
  uint64_t k_descale_ptr;
  uint64_t v_descale_ptr;
  int64_t q_stride[3];  // elements, over (batch, seqlen, heads); head_dim is contiguous
  int64_t k_stride[3];
  int64_t v_stride[3];
  int64_t o_stride[3];
  int64_t descale_stride[6];  // elements: q (batch, head_k), k (batch, head_k), v (batch, head_k)
  float scale_log2;  // softmax_scale * log2(e): scores go to base 2 in one multiply
  float q_descale;   // host values, used when the matching pointer is 0 (1 for BF16)
  float k_descale;
  float v_descale;
  int32_t seqlen;
  int32_t heads;
  int32_t heads_k;
  int32_t reserved;  // keeps the size a multiple of 8
  FastDiv div_n_tiles;  // tile word -> (batch * heads + head, tile)
  FastDiv div_heads;    // batch * heads + head -> (batch, head)
  FastDiv div_group;    // head -> KV head (heads / heads_k query heads per KV head)
};

// Every offset and the size are checked against src/asm/kernel_args.py, the table the
// generated assembly reads (static_asserts generated into the build tree, compiled with the
// host code); a change here needs the same change there. Field names as cuda::FwdKernelArgs
// where both have the field.

}  // namespace zyfa::kernels
