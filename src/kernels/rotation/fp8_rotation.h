// The rotations of zyfa_fp8_quantize, defined once for the cpu, cuda and gfx950 kernels (plain
// C++ with no library calls, so that nvcc and the HIP compiler take it as is). Every backend
// performs exactly the float32 operations of transform_row(), in the same order, so the codes
// and descales agree bit for bit; the GPU kernels spread the butterflies of one stage over
// threads, which changes no operand.
//
//   x    row of head_dim values (bf16 -> fp32 is exact), minus the smoothing mean (one fp32 sub)
//   sign x_i negated where bit i of the sign words is set (exact)
//   FWHT over blocks of B values (B = d for Hadamard, 64 for DCT3 x H64): stages h = 1, 2, ..,
//        B/2, each pair (i, i+h) with (i & h) == 0 becoming (x_i + x_{i+h}, x_i - x_{i+h})
//   post Hadamard: y_i = x_i * post_scale (fp32(1/sqrt(d)));
//        DCT3: y_{64c+e} = fma(K[c][2], x_{128+e}, fma(K[c][1], x_{64+e}, K[c][0] * x_e)),
//        K = fp32(C3) / 8 (the 1/sqrt(64) of H64 folded in exactly)
#pragma once

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIP__)
#define ZYFA_ROT_HD __host__ __device__
#else
#define ZYFA_ROT_HD
#endif

namespace zyfa::rotation {

inline constexpr int kNone = 0;      // ZYFA_ROTATION_NONE
inline constexpr int kHadamard = 1;  // ZYFA_ROTATION_HADAMARD
inline constexpr int kDct3H64 = 2;   // ZYFA_ROTATION_DCT3_HADAMARD64
inline constexpr int kMaxDim = 256;  // sign words cover this many columns

// Everything a kernel needs to know about R; built on the host by make_params().
struct Params {
  uint32_t sign[kMaxDim / 32];  // bit i of the row: column i is negated
  float post_scale;             // Hadamard: fp32(1/sqrt(d))
  float dct[9];                 // DCT3: K[c][a] at dct[3c + a]
  int32_t kind;                 // kNone, kHadamard or kDct3H64
  int32_t block;                // FWHT block length B (0 for kNone)
};

// splitmix64 (Steele, Lea, Flood 2014): the sign of column i is bit (i % 64) of the
// (i / 64 + 1)-th output for the state started at the seed.
ZYFA_ROT_HD inline uint64_t splitmix64_next(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 2^e for -126 <= e <= 127, built from its bits (exact, no library call).
inline float pow2f(int e) {
  const uint32_t bits = static_cast<uint32_t>(e + 127) << 23;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

// The orthonormal 3-point DCT-II, C[c][a] = alpha_c cos(pi (2a+1) c / 6), rounded to fp32 once
// (C[1][1] = cos(pi/2) is exactly 0).
inline constexpr float kC3[9] = {
    0x1.279a74p-1f, 0x1.279a74p-1f, 0x1.279a74p-1f,    // 1/sqrt(3)
    0x1.6a09e6p-1f, 0.0f,           -0x1.6a09e6p-1f,   // +-sqrt(1/2)
    0x1.a20bd8p-2f, -0x1.a20bd8p-1f, 0x1.a20bd8p-2f};  // sqrt(2/3) (1/2, -1, 1/2)

// kind/d must already be valid (validate.cpp): Hadamard d a power of two <= kMaxDim, DCT3 d = 192.
inline Params make_params(int kind, int d, uint64_t seed) {
  Params p{};
  p.kind = kind;
  if (kind == kNone) return p;
  uint64_t state = seed;
  for (int w = 0; w < (d + 63) / 64; ++w) {
    const uint64_t bits = splitmix64_next(&state);
    p.sign[2 * w] = static_cast<uint32_t>(bits);
    p.sign[2 * w + 1] = static_cast<uint32_t>(bits >> 32);
  }
  if (kind == kHadamard) {
    int log2d = 0;
    while ((1 << log2d) < d) ++log2d;
    p.block = d;
    // fp32(2^(-log2d/2)): exact for even log2d, fp32(sqrt(1/2)) scaled exactly otherwise.
    p.post_scale = log2d % 2 == 0 ? pow2f(-log2d / 2) : 0x1.6a09e6p-1f * pow2f(-(log2d - 1) / 2);
  } else {
    p.block = 64;
    for (int i = 0; i < 9; ++i) p.dct[i] = kC3[i] * 0.125f;  // exact
  }
  return p;
}

ZYFA_ROT_HD inline bool negated(const Params& p, int i) { return (p.sign[i >> 5] >> (i & 31)) & 1u; }

// The signs as XOR masks of a BF16 row read as 32-bit words (column 2k in the low half of word
// k): bit 15 of mask k negates column 2k, bit 31 column 2k + 1. d / 2 masks.
inline void bf16_pair_sign_masks(const Params& p, int d, uint32_t* masks) {
  for (int k = 0; k < d / 2; ++k)
    masks[k] = (negated(p, 2 * k) ? 0x8000u : 0u) | (negated(p, 2 * k + 1) ? 0x80000000u : 0u);
}

// One row in place, d values, in the order every backend follows (see the top of this file).
// fma is the single-rounding fused multiply-add on every backend (std::fma on the host).
template <typename Fma>
ZYFA_ROT_HD inline void transform_row(float* x, int d, const Params& p, Fma fma) {
  if (p.kind == kNone) return;
  for (int i = 0; i < d; ++i)
    if (negated(p, i)) x[i] = -x[i];
  for (int base = 0; base < d; base += p.block)
    for (int h = 1; h < p.block; h *= 2)
      for (int i = 0; i < p.block; ++i)
        if ((i & h) == 0) {
          const float a = x[base + i], b = x[base + i + h];
          x[base + i] = a + b;
          x[base + i + h] = a - b;
        }
  if (p.kind == kHadamard) {
    for (int i = 0; i < d; ++i) x[i] = x[i] * p.post_scale;
    return;
  }
  for (int e = 0; e < 64; ++e) {
    const float z0 = x[e], z1 = x[64 + e], z2 = x[128 + e];
    float y[3];
    for (int c = 0; c < 3; ++c) y[c] = fma(p.dct[3 * c + 2], z2, fma(p.dct[3 * c + 1], z1, p.dct[3 * c] * z0));
    x[e] = y[0];
    x[64 + e] = y[1];
    x[128 + e] = y[2];
  }
}

}  // namespace zyfa::rotation
