// From a validated QuantizeProblem to the launches of zyfa_fp8_quantize on gfx950: one
// fp8_amax_* pass over the whole source, then fp8_convert_* over rows of contiguous elements.
#pragma once

#include <vector>

#include "fp8_quantize_args.h"
#include "fp8_rotate_args.h"
#include "host/problem.h"

namespace zyfa::amd {

struct ConvertLaunch {
  kernels::Fp8ConvertArgs args;
  uint32_t grid[3];
};

struct QuantizePlan {
  const char* amax_kernel;
  const char* convert_kernel;
  kernels::Fp8AmaxArgs amax;
  std::vector<ConvertLaunch> converts;  // in order; usually one
  size_t src_bytes;                     // extents for the memory ranges
  size_t dst_bytes;
};

// NOT_SUPPORTED when the tensor has 2^31 elements or more. `partials` is the device buffer of
// kernels::kAmaxWorkgroups uint32 values.
zyfa_status_t plan_quantize(const QuantizeProblem& p, void* partials, const char* backend_name,
                            QuantizePlan* out);

// With options (QuantizeProblem::transformed()): fp8_rot_amax_* unless the descale is static,
// then fp8_rot_convert_*, then fp8_rot_count when the counter is asked for; all take `args`.
// `scratch` holds kRotScratchWords uint32: the amax partials, then the saturation counts.
inline constexpr int kRotScratchWords = 2 * kernels::kRotWorkgroups;
struct RotatePlan {
  const char* amax_kernel;     // null with a static descale
  const char* convert_kernel;
  const char* count_kernel;    // null without a counter
  kernels::Fp8RotateArgs args;
  size_t src_bytes, dst_bytes, mean_bytes;
};
zyfa_status_t plan_rotate_quantize(const QuantizeProblem& p, void* scratch, const char* backend_name,
                                   RotatePlan* out);

}  // namespace zyfa::amd
