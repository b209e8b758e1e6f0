// Arguments of the Hopper attention kernels, shared by the host launcher and the device code.
// Passed by value as a __grid_constant__ parameter; the tensor maps (TMA descriptors) for q, k
// and v travel as separate parameters because they need 64-byte alignment.
#pragma once

#include <cstdint>

namespace zyfa::cuda {

#pragma pack(push, 1)
struct FwdKernelArgs {
  const uint32_t* job_table;  // device copy of JobTable::words
  uint16_t* out;              // BF16 (batch, seqlen, heads, d_v) with the strides below
  float* lse;                 // (batch, heads, seqlen) contiguous, or null
  const float* q_descale_ptr;  // device descales (null: use the *_descale values)
  const float* k_descale_ptr;
  const float* v_descale_ptr;
  int64_t o_stride[3];  // elements, over (batch, seqlen, heads)
  // Element strides of the device descales over (batch, head_k): q, k, v, each batch then
  // head_k (0 broadcasts). Names, order and meaning as kernels::AttnFwdArgs (gfx950); both
  // are filled by plan::set_descales.
  int64_t descale_stride[6];
  int32_t batch, seqlen, heads, heads_k;
  float scale_log2;  // softmax_scale * log2(e), plan::scale_log2
  float q_descale, k_descale, v_descale;  // host descales (1 for BF16)
  // Lengths. Fixed: seqlen queries and seqlen_k >= seqlen keys per sequence, causal aligned
  // bottom-right (query i sees keys j <= i + seqlen_k - seqlen). Varlen (cu_seqlens_q set):
  // batch sequences packed along the rows of batch-1 tensors of total_q / total_k rows,
  // sequence b's rows and lengths from cu_seqlens_q/k (device memory, batch + 1 each, clamped
  // into the tensors by varlen::seq_at); seqlen and seqlen_k are then the maxima.
  const int32_t* cu_seqlens_q;
  const int32_t* cu_seqlens_k;
  int64_t total_q, total_k;
  int64_t lse_stride[2];  // elements, over (batch, heads); the row index adds the sequence's first row
  int32_t seqlen_k;
  int32_t pad_;
};
#pragma pack(pop)
static_assert(sizeof(FwdKernelArgs) == 6 * 8 + 9 * 8 + 4 * 4 + 4 * 4 + 2 * 8 + 4 * 8 + 2 * 4, "FwdKernelArgs layout");

#pragma pack(push, 1)
struct QuantizeKernelArgs {
  const void* src;
  uint8_t* dst;
  float* descale;  // receives the amax bits first, then the descale
  int64_t shape[4];
  int64_t src_stride[4];
  int64_t dst_stride[4];
  int32_t src_is_fp32;  // 1: float32 source, 0: bfloat16
  int32_t pad_;
};
#pragma pack(pop)
static_assert(sizeof(QuantizeKernelArgs) == 3 * 8 + 12 * 8 + 8, "QuantizeKernelArgs layout");

}  // namespace zyfa::cuda

namespace zyfa::cuda {

// The FP8 v pre-pass: v (batch, seqlen, heads_k, 128) with element strides -> vᵀ
// [batch][heads_k][128 d][seqlen_pad] contiguous, keys permuted within each 16 as the kernel's
// probability registers expect (position 4c+i holds key {2c, 2c+1, 2c+8, 2c+9}[i]).
#pragma pack(push, 1)
struct TransposeVArgs {
  const uint8_t* v;
  uint8_t* vt;
  int64_t v_stride_b, v_stride_s, v_stride_h;  // elements (= bytes)
  int64_t seqlen_pad;                          // row length of vᵀ (fixed: seqlen to 128; varlen: varlen::group_columns)
  int32_t batch, seqlen, heads_k, pad_;
  // Varlen (cu_seqlens_k set): batch sequences in v's total_k rows, one vᵀ of batch 1; the keys
  // of sequence b start at column varlen::group_first_column(b, k0) of each (head_k, d) row, so that
  // every sequence starts a 16-key group of its own. seqlen is then max_seqlen_k.
  const int32_t* cu_seqlens_k;
  int64_t total_k;
};
#pragma pack(pop)
static_assert(sizeof(TransposeVArgs) == 2 * 8 + 4 * 8 + 4 * 4 + 2 * 8, "TransposeVArgs layout");

}  // namespace zyfa::cuda
