// Bit-level helpers for IEEE formats used by the vector ALU (f32, f64, f16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace zyfa::emu {

inline float as_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t as_u32(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline double as_f64(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }
inline uint64_t as_u64(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }

inline bool is_nan32(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu); }
inline bool is_snan32(uint32_t u) { return is_nan32(u) && !(u & 0x400000u); }
inline uint32_t quiet32(uint32_t u) { return u | 0x400000u; }
inline bool is_denorm32(uint32_t u) { return (u & 0x7F800000u) == 0 && (u & 0x7FFFFFu); }
inline uint32_t flush32(uint32_t u) { return is_denorm32(u) ? (u & 0x80000000u) : u; }

// IEEE half, exact widening.
inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F) return as_f32(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {
    const float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  return as_f32(sign | ((exp + 112) << 23) | (man << 13));
}

// IEEE half, round to nearest even; NaN stays NaN (quiet), overflow gives infinity.
inline uint16_t f32_to_f16(float f) {
  const uint32_t u = as_u32(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  const uint32_t absu = u & 0x7FFFFFFFu;
  if (absu > 0x7F800000u) return uint16_t(sign | 0x7E00 | ((absu >> 13) & 0x3FF));
  if (absu == 0x7F800000u) return uint16_t(sign | 0x7C00);
  const double a = std::fabs(double(f));
  if (a >= 65520.0) return uint16_t(sign | 0x7C00);
  // Scale to an integer number of the smallest units of the target binade and round RNE.
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int unit_exp = std::max(e - 11, -24);
  const double q = std::nearbyint(std::ldexp(a, -unit_exp));  // RNE under the default mode
  const double r = std::ldexp(q, unit_exp);
  if (r == 0) return sign;
  int re;
  std::frexp(r, &re);
  if (re - 1 < -14) return uint16_t(sign | uint16_t(std::ldexp(r, 24)));  // subnormal
  const uint32_t exp = uint32_t(re - 1 + 15);
  const uint32_t man = uint32_t(std::ldexp(r, -(re - 1)) * 1024.0) - 1024;
  return uint16_t(sign | (exp << 10) | man);
}

}  // namespace zyfa::emu
