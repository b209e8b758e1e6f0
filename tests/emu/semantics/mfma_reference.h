// Test-side model of gfx950 MFMA operands, written from the documented layout formulas (not
// from the emulator's code): logical matrices are scattered into lane registers, and the
// expected D is computed from the logical matrices with the documented accumulation rule.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "emu/semantics/convert.h"
#include "emu/semantics/mfma.h"

namespace zyfa::emu::test {

enum class Fmt { BF16, F16, E4M3, E5M2, E2M3, E3M2, E2M1 };

inline int fmt_bits(Fmt f) {
  switch (f) {
    case Fmt::BF16:
    case Fmt::F16: return 16;
    case Fmt::E4M3:
    case Fmt::E5M2: return 8;
    case Fmt::E2M3:
    case Fmt::E3M2: return 6;
    case Fmt::E2M1: return 4;
  }
  return 0;
}

inline const char* fmt_name(Fmt f) {
  static const char* names[] = {"Bf16", "F16", "E4m3", "E5m2", "E2m3", "E3m2", "E2m1"};
  return names[static_cast<int>(f)];
}

// Value of a code, from the format definitions (OCP 8-bit FP, OCP MX, IEEE binary16, bf16).
inline double fmt_value(Fmt f, uint32_t code) {
  auto mini = [](uint32_t c, int ebits, int mbits, int bias) {
    const uint32_t mant = c & ((1u << mbits) - 1);
    const uint32_t e = (c >> mbits) & ((1u << ebits) - 1);
    const double sign = (c >> (ebits + mbits)) & 1u ? -1.0 : 1.0;
    if (e == 0) return sign * std::ldexp(mant, 1 - bias - mbits);
    return sign * std::ldexp((1u << mbits) + mant, static_cast<int>(e) - bias - mbits);
  };
  switch (f) {
    case Fmt::BF16: {
      const uint32_t bits = code << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    case Fmt::F16: return mini(code, 5, 10, 15);
    case Fmt::E4M3: return mini(code, 4, 3, 7);
    case Fmt::E5M2: return mini(code, 5, 2, 15);
    case Fmt::E2M3: return mini(code, 2, 3, 1);
    case Fmt::E3M2: return mini(code, 3, 2, 3);
    case Fmt::E2M1: return mini(code, 2, 1, 1);
  }
  return NAN;
}

// A random finite code in a magnitude range small enough that the long double reference below
// is exact (see RandomOperands).
inline uint32_t random_code(Fmt f, std::mt19937_64& rng) {
  std::uniform_int_distribution<uint32_t> u(0, 0xFFFFFFFFu);
  const uint32_t r = u(rng);
  const uint32_t sign = r >> 31;
  switch (f) {
    case Fmt::BF16: return (sign << 15) | ((119 + r % 17) << 7) | ((r >> 8) & 0x7F);  // 2^-8..2^8
    case Fmt::F16: return (sign << 15) | ((7 + r % 17) << 10) | ((r >> 8) & 0x3FF);   // 2^-8..2^8
    case Fmt::E4M3: {
      uint32_t c = r & 0x7F;
      if (c == 0x7F) c = 0x7E;  // not NaN; every other code, subnormals included
      return (sign << 7) | c;
    }
    case Fmt::E5M2: return (sign << 7) | ((8 + r % 15) << 2) | ((r >> 8) & 3);  // 2^-7..2^7
    case Fmt::E2M3:
    case Fmt::E3M2: return r & 0x3F;
    case Fmt::E2M1: return r & 0xF;
  }
  return 0;
}

struct Shape {
  int m, n, k;
  int per_lane;      // elements of A/B per lane
  bool chunked_a;  // f8f6f4 with an FP8 or FP6 operand: two 16-element K chunks per lane
  bool chunked_b;
};

// Documented operand layout, written as "where does logical element (row, k) live":
//  contiguous: lane = row + M * (k / per_lane), element = k % per_lane;
//  f8f6f4 FP8/FP6: element b < 16 holds k = 16g + b, b >= 16 holds k = K/2 + 16g + (b - 16),
//  with g = lane / M (FP4 is contiguous).
struct Home {
  int lane, element;
};
inline Home operand_home(int mn, int k_dim, int per_lane, bool chunked, int row, int k) {
  if (chunked) {
    const int half = k_dim / 2;
    const int chunk = k / half;
    const int within = k % half;
    return {row + mn * (within / 16), chunk * 16 + within % 16};
  }
  return {row + mn * (k / per_lane), k % per_lane};
}

// Documented output layout. 16x16: VGPR i%4, lane 16*(i/4)+j. 32x32: VGPR 4*(i/8)+i%4,
// lane 32*((i/4)%2)+j.
struct OutHome {
  int reg, lane;
};
inline OutHome output_home(int mn, int i, int j) {
  if (mn == 16) return {i % 4, 16 * (i / 4) + j};
  return {4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j};
}

// Writes `code` as element `element` of a lane's registers (elements packed upwards from bit 0).
inline void put_element(uint32_t* lane_regs, int bits, int element, uint32_t code) {
  for (int b = 0; b < bits; ++b) {
    const int bit = element * bits + b;
    const uint32_t mask = 1u << (bit % 32);
    if ((code >> b) & 1u) {
      lane_regs[bit / 32] |= mask;
    } else {
      lane_regs[bit / 32] &= ~mask;
    }
  }
}

struct Operands {
  Shape shape;
  Fmt fa, fb;
  int a_regs, b_regs, d_regs;
  std::vector<uint32_t> a_code;  // logical A codes, m x k
  std::vector<uint32_t> b_code;  // logical B codes, k x n
  std::vector<float> c;          // logical C, m x n
  std::vector<uint32_t> a, b, creg;  // lane-major registers
  // Scales as logical E8M0 bytes: A rows x K-blocks, B columns x K-blocks.
  std::vector<uint8_t> sa, sb;
  std::vector<uint32_t> scale_a, scale_b;  // 64 lanes each
  uint32_t sel_a = 0, sel_b = 0;

  void scatter() {
    const Shape& s = shape;
    a.assign(64 * a_regs, 0);
    b.assign(64 * b_regs, 0);
    creg.assign(64 * d_regs, 0);
    for (int i = 0; i < s.m; ++i) {
      for (int k = 0; k < s.k; ++k) {
        const Home h = operand_home(s.m, s.k, s.per_lane, s.chunked_a, i, k);
        put_element(&a[h.lane * a_regs], fmt_bits(fa), h.element, a_code[i * s.k + k]);
      }
    }
    for (int k = 0; k < s.k; ++k) {
      for (int j = 0; j < s.n; ++j) {
        const Home h = operand_home(s.n, s.k, s.per_lane, s.chunked_b, j, k);
        put_element(&b[h.lane * b_regs], fmt_bits(fb), h.element, b_code[k * s.n + j]);
      }
    }
    for (int i = 0; i < s.m; ++i) {
      for (int j = 0; j < s.n; ++j) {
        const OutHome o = output_home(s.m, i, j);
        std::memcpy(&creg[o.lane * d_regs + o.reg], &c[i * s.n + j], 4);
      }
    }
    if (!sa.empty()) {
      // Scale of A row i, K block p: byte sel_a of lane i + M*p (B: column j, lane j + N*p).
      const int blocks = s.k / 32;
      scale_a.assign(64, 0);
      scale_b.assign(64, 0);
      for (int i = 0; i < s.m; ++i) {
        for (int p = 0; p < blocks; ++p) {
          scale_a[i + s.m * p] |= static_cast<uint32_t>(sa[i * blocks + p]) << (8 * sel_a);
        }
      }
      for (int j = 0; j < s.n; ++j) {
        for (int p = 0; p < blocks; ++p) {
          scale_b[j + s.n * p] |= static_cast<uint32_t>(sb[j * blocks + p]) << (8 * sel_b);
        }
      }
    }
  }

  // The documented rule: per 32-wide K block (or the whole K when K < 32), the exact value of
  // running C plus the block's scaled products, rounded once to f32. long double holds every
  // block sum of the generated inputs exactly (their bits span fewer than 64 binades).
  std::vector<float> expected() const {
    const Shape& s = shape;
    const int block = s.k < 32 ? s.k : 32;
    std::vector<float> d(s.m * s.n);
    for (int i = 0; i < s.m; ++i) {
      for (int j = 0; j < s.n; ++j) {
        float acc = c[i * s.n + j];
        for (int p = 0; p < s.k / block; ++p) {
          long double scale = 1.0L;
          if (!sa.empty()) {
            const int blocks = s.k / 32;
            const uint8_t x = sa[i * blocks + p], y = sb[j * blocks + p];
            if (x == 0xFF || y == 0xFF) {
              scale = NAN;
            } else {
              scale = std::ldexp(1.0L, static_cast<int>(x) + static_cast<int>(y) - 254);
            }
          }
          long double sum = acc;
          for (int t = 0; t < block; ++t) {
            const int kk = p * block + t;
            sum += static_cast<long double>(fmt_value(fa, a_code[i * s.k + kk])) *
                   static_cast<long double>(fmt_value(fb, b_code[kk * s.n + j])) * scale;
          }
          acc = static_cast<float>(sum);
        }
        d[i * s.n + j] = acc;
      }
    }
    return d;
  }

  // D as a logical matrix, read through the documented output layout.
  std::vector<float> logical(const std::vector<uint32_t>& dreg) const {
    std::vector<float> d(shape.m * shape.n);
    for (int i = 0; i < shape.m; ++i) {
      for (int j = 0; j < shape.n; ++j) {
        const OutHome o = output_home(shape.m, i, j);
        std::memcpy(&d[i * shape.n + j], &dreg[o.lane * d_regs + o.reg], 4);
      }
    }
    return d;
  }
};

}  // namespace zyfa::emu::test
