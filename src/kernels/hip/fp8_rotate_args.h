// Kernel arguments of zyfa_fp8_quantize with options on gfx950 (fp8_rotate.hip): smoothing
// mean, rotation, static descale, saturation counter. fp8_rot_amax_* writes one partial amax
// per workgroup (skipped with a static descale); fp8_rot_convert_* reduces them, converts and
// writes one saturation count per workgroup; fp8_rot_count sums those into the counter.
// fp8_rot_staged_{amax,convert}_d{32,64,128} do the same for BF16 Hadamard rows without a
// mean, packed and 16-byte aligned: one lane per row, rows staged through LDS.
#pragma once

#include "../rotation/fp8_rotation.h"
#include "fast_division.h"
#include "kernel_args_common.h"

namespace zyfa::kernels {

inline constexpr int kRotWorkgroups = 256;   // at most this many partials of each kind (slots fixed per launch)
inline constexpr int kRotThreads = 256;      // every fp8_rot kernel
inline constexpr int kRotTileElems = 512;    // LDS floats per tile: 512 / d rows (2 rows of 192)

struct ZYFA_KERNEL_ARGS Fp8RotateArgs {
  uint64_t src;            // BF16 or FP32 (b, s, h, d), last stride 1
  uint64_t dst;            // FP8 codes
  uint64_t partials;       // uint32[kRotWorkgroups] amax bit patterns (unsigned order = float order)
  uint64_t counts;         // uint32[kRotWorkgroups] saturation counts
  uint64_t descale;        // float, written by workgroup 0 of the convert
  uint64_t saturated;      // uint32 or 0 (fp8_rot_count)
  uint64_t mean;           // float (h, d) or 0
  int64_t src_stride[3];   // elements: batch, seqlen, heads
  int64_t dst_stride[3];
  uint32_t rows;           // batch * seqlen * heads < 2^31
  uint32_t head_dim;
  uint32_t heads;
  uint32_t seqlen;
  uint32_t rows_per_tile;  // kRotTileElems / head_dim
  uint32_t tiles;          // ceil(rows / rows_per_tile)
  FastDiv div_heads;       // row -> (b*s, h)
  FastDiv div_seqlen;      // b*s -> (b, s)
  FastDiv div_head_dim;    // tile element -> (row, column)
  float static_descale;    // 0: computed from the partials
  float static_inv;        // fp32(1 / static_descale)
  rotation::Params rot;
  uint32_t workgroups;     // of every kernel but fp8_rot_count: the partials written and read
  uint32_t pad;
  uint32_t sign_mask[64];  // staged kernels: word k of a BF16 row XOR this flips columns 2k, 2k + 1
};
static_assert(offsetof(Fp8RotateArgs, src_stride) == 56, "Fp8RotateArgs layout");
static_assert(offsetof(Fp8RotateArgs, rows) == 104, "Fp8RotateArgs layout");
static_assert(offsetof(Fp8RotateArgs, rot) == 160, "Fp8RotateArgs layout");
static_assert(sizeof(rotation::Params) == 80, "rotation::Params layout");
static_assert(offsetof(Fp8RotateArgs, sign_mask) == 248, "Fp8RotateArgs layout");
static_assert(sizeof(Fp8RotateArgs) == 504, "Fp8RotateArgs layout");

}  // namespace zyfa::kernels
