// Division by a divisor fixed per launch, without an integer divide: the host computes a
// multiplier and shift, the kernel does one 32x32->64 multiply and a shift. Kernels use it
// instead of '/' so that their code holds only plain integer multiplies and shifts
// (the compiler's generic 32-bit division goes through a float reciprocal).
//
// With l = ceil(log2 d) and m = ceil(2^(31+l) / d) < 2^32, floor(n * m / 2^(31+l)) = floor(n / d)
// for every 0 <= n < 2^31 (Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994, with 31-bit numerators: m*d - 2^(31+l) < d <= 2^l).
#pragma once

#include "kernel_args_common.h"

namespace zyfa::kernels {

struct ZYFA_KERNEL_ARGS FastDiv {
  uint32_t magic;
  uint32_t shift;  // 31 + l
};
static_assert(sizeof(FastDiv) == 8, "FastDiv layout");

#if defined(__HIP_DEVICE_COMPILE__)
__device__ inline uint32_t fast_div(uint32_t n, FastDiv d) {
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * d.magic) >> d.shift);
}
#endif

// Host side: divisor d in [1, 2^31).
inline FastDiv make_fast_div(uint32_t d) {
  uint32_t l = 0;
  while ((uint64_t{1} << l) < d) ++l;
  const uint64_t p = uint64_t{1} << (31 + l);
  return FastDiv{static_cast<uint32_t>((p + d - 1) / d), 31 + l};
}

}  // namespace zyfa::kernels
