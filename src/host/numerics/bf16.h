// bfloat16 <-> float/double conversions with round-to-nearest-even.
// Shared by host code (cpu backend, quantization, tests); header-only so that no
// backend pays a call for a conversion.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace zyfa::numerics {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// bf16 is the upper half of a binary32, so decoding is exact.
inline float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

inline constexpr uint16_t kBf16QuietNaN = 0x7FC0;

// RNE of a float to bf16. NaN stays NaN (quiet, sign kept); overflow gives +-inf as IEEE
// rounding does.
inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7FFF plus the lowest kept bit rounds the discarded half to nearest, ties to even.
  const uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

// RNE of a double straight to bf16. Going through float first would round twice and can
// differ from the correctly rounded result when the double lies just off a float tie.
inline uint16_t double_to_bf16(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xFFC0 : kBf16QuietNaN;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a == 0.0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): leading bit is 2^(e-1)
  // bf16 keeps 8 significant bits; below the normal range (2^-126) the quantum is fixed.
  const int quantum_exp = (e - 1 >= -126) ? (e - 1) - 7 : -126 - 7;
  const double r = std::nearbyint(std::ldexp(a, -quantum_exp));  // current mode: nearest-even
  const double value = std::ldexp(r, quantum_exp);
  // value is now exactly representable in float (or overflows to inf), so this is exact.
  const float f = static_cast<float>(value);
  return static_cast<uint16_t>(sign | (float_bits(f) >> 16));
}

}  // namespace zyfa::numerics
