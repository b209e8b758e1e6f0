// Exact summation of doubles with one final rounding to f32, for the MFMA accumulation rule
// "products exact, each K block summed exactly, one f32 rounding per block".
//
// The value is kept as a two's-complement fixed-point integer wide enough for every term an
// MFMA can produce: products of any supported input format (bf16 x bf16 up to 2^256, down to
// 2^-266), times E8M0 scales (2^-254 .. 2^254) for the FP8/FP6/FP4 family (products from 2^-286
// to 2^286), and f32 accumulators (2^-149 .. 2^128). The least significant bit weighs 2^-320,
// the integer has 640 bits, so sums of thousands of terms cannot overflow it.
#pragma once

#include <array>
#include <cstdint>

namespace zyfa::emu {

class ExactSum {
 public:
  // `term` must be finite; its significant bits must lie within the fixed-point range (checked:
  // std::logic_error otherwise, since that means a caller produced an impossible term).
  void add(double term);
  // Round-to-nearest-even of the exact sum to f32 bits; subnormal results are kept, overflow
  // gives infinity. An exact zero is +0 unless every added term was -0 (IEEE sum rule).
  uint32_t round_to_f32_bits() const;

 private:
  static constexpr int kWords = 10;
  static constexpr int kLsbExponent = -320;
  std::array<uint64_t, kWords> words_{};
  bool only_negative_zeros_ = true;
};

// Exponents of the most and least significant set bits of a finite nonzero double.
void bit_span(double v, int* msb, int* lsb);

// RNE f32 bits of `acc + sum(terms)`, computed exactly. Non-finite inputs follow IEEE double
// arithmetic (NaN results are the canonical quiet NaN 0x7FC00000).
uint32_t exact_f32_sum(float acc, const double* terms, int count);

}  // namespace zyfa::emu
