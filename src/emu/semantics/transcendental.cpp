// gfx950 VALU transcendentals. What the sources say:
//  - CDNA4 pseudocode (tinygrad cdna/str_pcode.py, from the ISA guide): V_EXP_F32 = pow(2, x),
//    V_LOG_F32 = log2(x), V_RCP_F32 = 1/x, V_RSQ_F32 = 1/sqrt(x), V_SQRT_F32 = sqrt(x). The ISA
//    guides describe these as approximations with 1 ULP accuracy; the pseudocode gives the
//    exact function, not the hardware's approximation.
//  - Special values follow the AMD ISA guides' functional examples for these instructions:
//    exp(-inf) = +0, exp(+inf) = +inf; log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf;
//    rcp(+-0) = +-inf, rcp(+-inf) = +-0; rsq(+-0) = +-inf, rsq(x < 0) = NaN, rsq(+inf) = +0;
//    sqrt(-0) = -0, sqrt(x < 0) = NaN. Invalid operations return the default NaN 0xFFC00000;
//    NaN inputs are returned quieted.
//  - Denormals: LLVM's AMDGPU backend treats these instructions as flushing f32 denormals
//    whatever MODE says — it scales inputs/results around them when it needs denormals
//    (SIISelLowering lowerFEXP2 / lowerFLOG2 / f32 sqrt and rcp lowering), and compiler code
//    built on it states "v_exp_f32 flushes subnormal results to zero". The emulator does the
//    same: denormal inputs are read as zero of the same sign, denormal results become zero.
//
// What the emulator computes: the exact function evaluated in double precision and rounded
// once to f32 (RNE). For rcp and sqrt the double result is correctly rounded and 53 >= 2*24+2
// bits make the second rounding innocuous, so the f32 result is the correctly rounded one. For
// rsq, a double result close to an f32 rounding midpoint is resolved exactly with an fma. For
// exp and log the result is correctly rounded unless the exact value lies within the double
// evaluation error (about 2^-52 relative) of an f32 midpoint; the result is deterministic on a
// given C library either way. The hardware may return either neighbour within its 1 ULP, so
// kernels must be verified with tolerances, never bit patterns, on these.
#include "emu/semantics/transcendental.h"

#include <cmath>

#include "emu/semantics/convert.h"

namespace zyfa::emu {
namespace {

constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kDefaultNan = 0xFFC00000u;
constexpr uint32_t kPosInf = 0x7F800000u;
constexpr uint32_t kQuietBit = 0x00400000u;

bool is_nan(uint32_t bits) { return (bits & 0x7FFFFFFFu) > kPosInf; }
bool is_denormal(uint32_t bits) { return (bits & kPosInf) == 0 && (bits & 0x007FFFFFu) != 0; }

uint32_t flush(uint32_t bits) { return is_denormal(bits) ? (bits & kSign) : bits; }

// Rounds a double to f32 bits (RNE) and flushes a denormal result.
uint32_t finish(double r) { return flush(bits_from_f32(static_cast<float>(r))); }

}  // namespace

uint32_t v_exp_f32(uint32_t src, uint32_t /*mode*/) {
  src = flush(src);
  if (is_nan(src)) return src | kQuietBit;
  return finish(std::exp2(static_cast<double>(f32_from_bits(src))));
}

uint32_t v_log_f32(uint32_t src, uint32_t /*mode*/) {
  src = flush(src);
  if (is_nan(src)) return src | kQuietBit;
  if ((src & 0x7FFFFFFFu) == 0) return kSign | kPosInf;  // log(+-0) = -inf
  if (src & kSign) return kDefaultNan;                    // negative, including -inf
  if (src == kPosInf) return kPosInf;
  return finish(std::log2(static_cast<double>(f32_from_bits(src))));
}

uint32_t v_rcp_f32(uint32_t src, uint32_t /*mode*/) {
  src = flush(src);
  if (is_nan(src)) return src | kQuietBit;
  // 1/+-0 = +-inf and 1/+-inf = +-0 fall out of IEEE double division.
  return finish(1.0 / static_cast<double>(f32_from_bits(src)));
}

uint32_t v_sqrt_f32(uint32_t src, uint32_t /*mode*/) {
  src = flush(src);
  if (is_nan(src)) return src | kQuietBit;
  if ((src & 0x7FFFFFFFu) == 0) return src;  // sqrt(+-0) = +-0
  if (src & kSign) return kDefaultNan;
  return finish(std::sqrt(static_cast<double>(f32_from_bits(src))));
}

uint32_t v_rsq_f32(uint32_t src, uint32_t /*mode*/) {
  src = flush(src);
  if (is_nan(src)) return src | kQuietBit;
  if ((src & 0x7FFFFFFFu) == 0) return (src & kSign) | kPosInf;  // rsq(+-0) = +-inf
  if (src & kSign) return kDefaultNan;
  if (src == kPosInf) return 0;
  const double x = static_cast<double>(f32_from_bits(src));
  const double r = 1.0 / std::sqrt(x);
  const float f = static_cast<float>(r);
  // If r sits near the midpoint between f and its neighbour towards r, decide the rounding
  // exactly: 1/sqrt(x) < mid  <=>  x * mid^2 > 1, and mid^2 (25-bit mid) is exact in double,
  // so the sign of fma(x, mid^2, -1) is exact. 1/sqrt(x) is never exactly a midpoint.
  const float toward = std::nextafter(f, r > static_cast<double>(f) ? HUGE_VALF : 0.0f);
  const double mid = (static_cast<double>(f) + static_cast<double>(toward)) / 2.0;
  if (static_cast<double>(f) != r && std::fabs(r - mid) <= std::ldexp(std::fabs(r), -50)) {
    const bool below_mid = std::fma(x, mid * mid, -1.0) > 0.0;
    const float lo = std::fmin(f, toward);
    const float hi = std::fmax(f, toward);
    return flush(bits_from_f32(below_mid ? lo : hi));
  }
  return flush(bits_from_f32(f));
}

}  // namespace zyfa::emu
