// From a validated QuantizeProblem to the launches of zyfa_fp8_quantize on gfx950: one
// fp8_amax_* pass over the whole source, then fp8_convert_* over rows of contiguous elements.
#pragma once

#include <vector>

#include "fp8_quantize_args.h"
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

}  // namespace zyfa::amd
