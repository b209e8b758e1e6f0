// zyfa_fp8_quantize with options (smoothing mean, rotation, static descale, saturation counter)
// on Hopper: arguments and the stream-ordered launch sequence of fp8_rotate.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/rotation/fp8_rotation.h"

namespace zyfa::cuda {

struct RotateQuantizeArgs {
  const void* src;             // BF16 or FP32 (b, s, h, d), last stride 1
  uint8_t* dst;                // FP8 codes
  float* descale;              // receives the amax bits first (computed descale), then the descale
  uint32_t* saturated;         // or null
  const float* mean;           // (h, d) or null
  int64_t shape[4];
  int64_t src_stride[3];       // elements: batch, seqlen, heads
  int64_t dst_stride[3];
  // Set by the launch, not the caller:
  int64_t src_row_step;        // row r starts at r * step (0: use the strides)
  int64_t dst_row_step;
  uint32_t sign_mask[64];      // staged kernels: XOR masks of the column signs of BF16 pairs
  int32_t src_is_fp32;
  int32_t vector_io;           // 1: every row start is aligned for whole-chunk loads and stores
  float static_descale;        // 0: computed
  float static_inv;            // fp32(1 / static_descale)
  rotation::Params rot;
};

// Whether rows can be read in chunks of (head_dim / 32 elements) and written likewise: the
// host checks the data pointers and byte strides against this alignment.
int rotate_chunk_align_src(int64_t head_dim, int elem_bytes, int kind);
int rotate_chunk_align_dst(int64_t head_dim, int kind);

// memsets, then [amax, descale] unless static, then convert; all on `stream`.
cudaError_t launch_fp8_rotate_quantize(const RotateQuantizeArgs& args, int sm_count, cudaStream_t stream);

}  // namespace zyfa::cuda
