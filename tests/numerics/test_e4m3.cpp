// e4m3fn encode/decode against the format definition and a brute-force nearest-even search.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "host/numerics/e4m3.h"
#include "support/zyfa_test_support.h"

namespace zyfa::numerics {
namespace {

// The value of a code from the OCP definition, written independently of e4m3_to_float.
double spec_value(int code) {
  const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  const double mag = e == 0 ? m * std::pow(2.0, -9) : (8 + m) * std::pow(2.0, e - 10);
  return s ? -mag : mag;
}

bool is_nan_code(int code) { return (code & 0x7F) == 0x7F; }

// Nearest finite code by exhaustive search; ties to the even code (mantissa LSB 0).
// Returns -1 when |x| rounds above 448 (a midpoint 464 ties to 448, whose mantissa is even).
int brute_force_encode(double x) {
  if (std::fabs(x) > 464.0) return -1;
  int best = -1;
  double best_err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if (is_nan_code(c)) continue;
    if (spec_value(c) == 0 && c != (std::signbit(x) ? 0x80 : 0x00)) continue;  // signed zero
    const double err = std::fabs(spec_value(c) - x);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  return best;
}

TEST(E4m3, DecodeMatchesDefinitionForAll256Codes) {
  for (int c = 0; c < 256; ++c) {
    const float f = e4m3_to_float(static_cast<uint8_t>(c));
    if (is_nan_code(c)) {
      EXPECT_TRUE(std::isnan(f)) << c;
    } else {
      EXPECT_EQ(f, spec_value(c)) << c;
    }
  }
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));   // smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));   // smallest normal
}

TEST(E4m3, EveryCodeRoundTrips) {
  for (int c = 0; c < 256; ++c) {
    const E4m3Encoded e = double_to_e4m3(e4m3_to_float(static_cast<uint8_t>(c)), false);
    if (is_nan_code(c)) {
      EXPECT_TRUE(is_nan_code(e.code)) << c;
    } else {
      EXPECT_EQ(e.code, c) << c;
      EXPECT_FALSE(e.saturated);
    }
  }
}

TEST(E4m3, MidpointsRoundToEven) {
  // Between every pair of adjacent positive codes (subnormal and normal): the midpoint goes to
  // the even code, and the nearest double on either side goes to the nearer code.
  for (int c = 0; c < 0x7E; ++c) {
    const double lo = spec_value(c), hi = spec_value(c + 1), mid = (lo + hi) / 2;
    const int even = (c & 1) ? c + 1 : c;
    EXPECT_EQ(double_to_e4m3(mid, false).code, even) << "midpoint after code " << c;
    EXPECT_EQ(double_to_e4m3(-mid, false).code, even | 0x80) << "negative midpoint after " << c;
    EXPECT_EQ(double_to_e4m3(std::nextafter(mid, 0.0), false).code, c);
    EXPECT_EQ(double_to_e4m3(std::nextafter(mid, 1e9), false).code, c + 1);
  }
}

TEST(E4m3, SubnormalsAndUnderflow) {
  for (int m = 1; m < 8; ++m) EXPECT_EQ(double_to_e4m3(m * std::ldexp(1.0, -9), false).code, m);
  EXPECT_EQ(double_to_e4m3(std::ldexp(1.0, -10), false).code, 0x00);  // tie: even is 0
  EXPECT_EQ(double_to_e4m3(std::nextafter(std::ldexp(1.0, -10), 1.0), false).code, 0x01);
  EXPECT_EQ(double_to_e4m3(-std::ldexp(1.0, -12), false).code, 0x80);  // underflow keeps the sign
  EXPECT_EQ(double_to_e4m3(std::ldexp(15.0, -10), false).code, 0x08);  // 7.5 quanta -> 2^-6
}

TEST(E4m3, OverflowSaturatesOrGivesNaN) {
  EXPECT_EQ(double_to_e4m3(449.0, false).code, 0x7E);  // rounds down to 448
  EXPECT_EQ(double_to_e4m3(464.0, false).code, 0x7E);  // tie between 448 and 480: even
  const E4m3Encoded over = double_to_e4m3(464.5, false);
  EXPECT_EQ(over.code, 0x7F);
  EXPECT_TRUE(over.saturated);
  EXPECT_EQ(double_to_e4m3(-1e6, true).code, 0xFE);
  EXPECT_TRUE(double_to_e4m3(-1e6, true).saturated);
  EXPECT_EQ(double_to_e4m3(INFINITY, false).code, 0x7F);
  EXPECT_EQ(double_to_e4m3(std::nan(""), true).code, 0x7F);
}

TEST(E4m3, RandomValuesMatchBruteForce) {
  const uint64_t seed = test::seed_for("E4m3.RandomValuesMatchBruteForce");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(-13.0, 9.5), sign(-1.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::copysign(std::exp2(exponent(rng)), sign(rng));
    const int want = brute_force_encode(x);
    const E4m3Encoded got = double_to_e4m3(x, false);
    if (want < 0) {
      EXPECT_TRUE(got.saturated) << x;
    } else {
      ASSERT_EQ(got.code, want) << "x = " << x << " seed " << seed;
    }
  }
}

TEST(E4m3, Pow2Descale) {
  EXPECT_EQ(pow2_descale(448.0), 1.0f);
  EXPECT_EQ(pow2_descale(std::nextafter(448.0f, 1e9f)), 2.0f);
  EXPECT_EQ(pow2_descale(1.0), std::ldexp(1.0f, -8));  // 1/448 -> 2^-8 (448 * 2^-9 < 1)
  EXPECT_EQ(pow2_descale(0.0), 1.0f);
  EXPECT_TRUE(std::isnan(pow2_descale(INFINITY)));
  EXPECT_EQ(pow2_descale(1e-40), std::ldexp(1.0f, -126));
}

}  // namespace
}  // namespace zyfa::numerics
