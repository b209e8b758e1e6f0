#include "emu/semantics/exact_sum.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace zyfa::emu {
namespace {

constexpr uint32_t kCanonicalNan = 0x7FC00000u;

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}


}  // namespace

void bit_span(double v, int* msb, int* lsb) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const int expf = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t mant = bits & ((uint64_t{1} << 52) - 1);
  int lsb_exp = -1074;
  if (expf != 0) {
    mant |= uint64_t{1} << 52;
    lsb_exp = expf - 1075;
  }
  *lsb = lsb_exp + __builtin_ctzll(mant);
  *msb = lsb_exp + 63 - __builtin_clzll(mant);
}

void ExactSum::add(double term) {
  if (term == 0.0) {
    if (!std::signbit(term)) only_negative_zeros_ = false;
    return;
  }
  only_negative_zeros_ = false;
  int exp = 0;
  const double frac = std::frexp(std::fabs(term), &exp);  // |term| = frac * 2^exp
  uint64_t mant = static_cast<uint64_t>(std::ldexp(frac, 53));
  int lsb = exp - 53;
  const int tz = __builtin_ctzll(mant);
  mant >>= tz;
  lsb += tz;
  const int pos = lsb - kLsbExponent;
  const int top = pos + 64 - __builtin_clzll(mant);
  if (pos < 0 || top >= kWords * 64 - 8) {
    throw std::logic_error("ExactSum: term outside the fixed-point range");
  }
  // The shifted mantissa spans at most two words.
  const int word = pos / 64;
  const int shift = pos % 64;
  const uint64_t lo = mant << shift;
  const uint64_t hi = shift ? (mant >> (64 - shift)) : 0;
  if (!std::signbit(term)) {
    unsigned __int128 carry = 0;
    for (int w = word; w < kWords; ++w) {
      const uint64_t addend = w == word ? lo : (w == word + 1 ? hi : 0);
      const unsigned __int128 s = static_cast<unsigned __int128>(words_[w]) + addend + carry;
      words_[w] = static_cast<uint64_t>(s);
      carry = s >> 64;
      if (w > word + 1 && carry == 0) break;
    }
  } else {
    uint64_t borrow = 0;
    for (int w = word; w < kWords; ++w) {
      const uint64_t sub = w == word ? lo : (w == word + 1 ? hi : 0);
      const uint64_t before = words_[w];
      const uint64_t after = before - sub - borrow;
      borrow = (before < sub || (before - sub) < borrow) ? 1 : 0;
      words_[w] = after;
      if (w > word + 1 && borrow == 0) break;
    }
  }
}

uint32_t ExactSum::round_to_f32_bits() const {
  std::array<uint64_t, kWords> mag = words_;
  const bool negative = (mag[kWords - 1] >> 63) != 0;
  if (negative) {  // two's-complement negate
    uint64_t carry = 1;
    for (auto& w : mag) {
      w = ~w + carry;
      carry = (carry && w == 0) ? 1 : 0;
    }
  }
  int h = -1;
  for (int w = kWords - 1; w >= 0 && h < 0; --w) {
    if (mag[w]) h = w * 64 + 63 - __builtin_clzll(mag[w]);
  }
  if (h < 0) return only_negative_zeros_ ? 0x80000000u : 0u;
  const auto bit = [&](int i) -> uint64_t { return (mag[i / 64] >> (i % 64)) & 1u; };
  // Index of the f32 result's last mantissa bit: 24 significant bits, but never below 2^-149.
  const int denormal_lsb = -149 - kLsbExponent;
  const int lsb = std::max(h - 23, denormal_lsb);
  uint64_t m = 0;
  for (int i = h; i >= lsb; --i) m = (m << 1) | bit(i);
  const bool round = lsb > 0 && bit(lsb - 1);
  bool sticky = false;
  for (int i = lsb - 2; i >= 0 && !sticky; --i) sticky = bit(i) != 0;
  if (round && (sticky || (m & 1u))) ++m;
  // m <= 2^24 and the exponent is exact, so the double is exact; the f32 cast only overflows.
  const double value = std::ldexp(static_cast<double>(m), lsb + kLsbExponent);
  const float f = static_cast<float>(negative ? -value : value);
  return f32_bits(f);
}

uint32_t exact_f32_sum(float acc, const double* terms, int count) {
  bool finite = std::isfinite(acc);
  for (int i = 0; i < count && finite; ++i) finite = std::isfinite(terms[i]);
  if (!finite) {
    double s = acc;
    for (int i = 0; i < count; ++i) s += terms[i];
    if (std::isnan(s)) return kCanonicalNan;
    return f32_bits(static_cast<float>(s));
  }
  // Fast path: when every nonzero operand's significant bits fit in one 46-bit window, every
  // partial double sum of up to 128 terms is exact, so one cast to f32 is the single rounding.
  int lo = 1 << 20, hi = -(1 << 20);
  const auto span = [&](double v) {
    if (v == 0.0) return;
    int msb, lsb;
    bit_span(v, &msb, &lsb);
    lo = std::min(lo, lsb);
    hi = std::max(hi, msb);
  };
  span(acc);
  for (int i = 0; i < count; ++i) span(terms[i]);
  if (count <= 128 && hi - lo <= 45) {
    double s = acc;
    for (int i = 0; i < count; ++i) s += terms[i];
    return f32_bits(static_cast<float>(s));
  }
  ExactSum sum;
  sum.add(acc);
  for (int i = 0; i < count; ++i) sum.add(terms[i]);
  return sum.round_to_f32_bits();
}

}  // namespace zyfa::emu
