// OCP FP8 e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; codes
// 0x7F/0xFF are NaN; largest finite 448 (0x7E); subnormals m * 2^-9 for m = 1..7 below 2^-6.
// Encoding rounds to nearest, ties to even (the gfx950 and Hopper conversions do the same).
#pragma once

#include <cmath>
#include <cstdint>

namespace zyfa::numerics {

inline constexpr double kE4m3Max = 448.0;
inline constexpr uint8_t kE4m3NaN = 0x7F;
inline constexpr int kE4m3Bias = 7;

// Exact: every e4m3 value is a float.
inline float e4m3_to_float(uint8_t code) {
  const int sign = code >> 7;
  const int exp = (code >> 3) & 0xF;
  const int man = code & 0x7;
  if (exp == 0xF && man == 0x7) return std::nanf("");
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(man), -9)
                             : std::ldexp(static_cast<float>(8 + man), exp - kE4m3Bias - 3);
  return sign ? -mag : mag;
}

struct E4m3Encoded {
  uint8_t code;
  bool saturated;  // |x| rounded above 448: the code is +-448 when saturating, else NaN
};

// RNE of x to e4m3. Magnitudes that round above 448 give +-448 with `saturate`, else NaN
// (the hardware conversion without its clamp bit does the latter); NaN gives 0x7F/0xFF.
inline E4m3Encoded double_to_e4m3(double x, bool saturate) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return {static_cast<uint8_t>(sign | kE4m3NaN), false};
  const double a = std::fabs(x);
  if (a == 0.0) return {sign, false};
  int e;
  std::frexp(a, &e);  // leading bit 2^(e-1)
  // 4 significant bits in the normal range; the subnormal quantum 2^-9 below 2^-6.
  const int quantum_exp = (e - 1 >= -6) ? (e - 1) - 3 : -9;
  const double r = std::nearbyint(std::ldexp(a, -quantum_exp));  // nearest-even (default mode)
  const double value = std::ldexp(r, quantum_exp);
  if (value > kE4m3Max) {
    return {static_cast<uint8_t>(sign | (saturate ? 0x7E : kE4m3NaN)), true};
  }
  if (value < std::ldexp(1.0, -6)) {
    // Subnormal (or zero): the code is the count of 2^-9 quanta. r == 8 is 2^-6, whose
    // normal code 0x08 happens to equal 8, so it needs no special case.
    return {static_cast<uint8_t>(sign | static_cast<uint8_t>(r)), false};
  }
  int ve;
  const double m = std::frexp(value, &ve);  // value = m * 2^ve, m in [0.5, 1)
  const int exp_field = (ve - 1) + kE4m3Bias;
  const int man = static_cast<int>(std::ldexp(m, 4)) - 8;  // 1.mmm * 8 - 8
  return {static_cast<uint8_t>(sign | (exp_field << 3) | man), false};
}

inline uint8_t float_to_e4m3(float x, bool saturate = false) {
  return double_to_e4m3(static_cast<double>(x), saturate).code;
}

// The power-of-two descale of zyfa_fp8_quantize: the smallest 2^e with amax / 2^e <= 448,
// so that src / descale never needs saturation. 1 when amax is 0; NaN when amax is not
// finite. Clamped below at 2^-126 so that the descale stays a normal float.
inline float pow2_descale(double amax) {
  if (!std::isfinite(amax)) return std::nanf("");
  if (amax == 0.0) return 1.0f;
  // amax (a float or bf16 value) / 448 is exact whenever it is a power of two, and the
  // division's rounding cannot cross a power of two otherwise (amax has 24 bits, the
  // quotient 53), so frexp gives the exact ceil(log2).
  int e;
  const double m = std::frexp(amax / kE4m3Max, &e);  // q = m * 2^e, m in [0.5, 1)
  int ceil_log2 = (m == 0.5) ? e - 1 : e;
  if (ceil_log2 < -126) ceil_log2 = -126;
  return std::ldexp(1.0f, ceil_log2);
}

}  // namespace zyfa::numerics
