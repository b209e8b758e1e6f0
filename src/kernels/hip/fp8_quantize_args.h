// Kernel arguments of zyfa_fp8_quantize on gfx950: fp8_amax_{bf16,f32} (HIP) writes one
// partial amax per workgroup; fp8_convert_{bf16,f32} (generated assembly, src/asm) reduces
// those partials itself, derives the descale, converts, and its first workgroup stores the
// descale. Two kernels and a fixed partial count keep the result deterministic.
#pragma once

#include "fast_division.h"
#include "kernel_args_common.h"

namespace zyfa::kernels {

inline constexpr int kAmaxWorkgroups = 64;   // partials written by fp8_amax_*
inline constexpr int kQuantizeThreads = 256; // both kernels
inline constexpr int kConvertRowChunk = 256; // elements per fp8_convert workgroup (one per thread)

// The source as up to 4 dims, innermost contiguous: element (x, y, z, w) lives at
// src + y*stride[0] + z*stride[1] + w*stride[2] bytes + x*element size.
struct ZYFA_KERNEL_ARGS Fp8AmaxArgs {
  uint64_t src;
  uint64_t partials;   // uint32[kAmaxWorkgroups]: bit patterns of max |x| (unsigned order = float order)
  int64_t byte_stride[3];
  uint32_t dim[4];     // x (contiguous), y, z, w
  uint32_t total;      // dim[0]*dim[1]*dim[2]*dim[3] < 2^31
  uint32_t reserved;
  FastDiv div_dim[3];  // by dim[0], dim[1], dim[2]
};
static_assert(sizeof(Fp8AmaxArgs) == 88, "Fp8AmaxArgs layout changed: update both sides");
static_assert(offsetof(Fp8AmaxArgs, dim) == 40, "Fp8AmaxArgs layout");

// One launch covers grid (ceil(row_len / 256), rows_y, rows_z); the host offsets src/dst and
// launches again for dims that do not fit. The assembly takes the offsets from
// src/asm/kernel_args.py (FP8_CONVERT_ARGS); the generated kernel_args_asserts.h checks this
// struct against that table.
struct ZYFA_KERNEL_ARGS Fp8ConvertArgs {
  uint64_t src;
  uint64_t dst;          // FP8 codes
  uint64_t partials;     // from fp8_amax_*
  uint64_t descale;      // float, written by workgroup (0,0,0)
  int64_t src_stride_y;  // bytes
  int64_t src_stride_z;
  int64_t dst_stride_y;
  int64_t dst_stride_z;
  uint32_t row_len;      // elements
  uint32_t reserved;
};

}  // namespace zyfa::kernels
