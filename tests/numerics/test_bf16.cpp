// bf16 conversions: round trips, RNE ties, NaN, and the single rounding from double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "host/numerics/bf16.h"
#include "support/zyfa_test_support.h"

namespace zyfa::numerics {
namespace {

TEST(Bf16, EveryCodeRoundTrips) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float f = bf16_to_float(static_cast<uint16_t>(c));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f))));
      EXPECT_TRUE(std::isnan(bf16_to_float(double_to_bf16(f))));
      continue;
    }
    EXPECT_EQ(float_to_bf16(f), c);
    EXPECT_EQ(double_to_bf16(f), c);
  }
}

TEST(Bf16, TiesToEven) {
  // 1 + 2^-8 is halfway between 1 (0x3F80) and 1 + 2^-7 (0x3F81): even is 0x3F80;
  // 1 + 3 * 2^-8 is halfway between 0x3F81 and 0x3F82: even is 0x3F82.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(double_to_bf16(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(double_to_bf16(-(1.0 + 3 * std::ldexp(1.0, -8))), 0xBF82);
  EXPECT_EQ(float_to_bf16(3.4e38f), 0x7F80);  // rounds past the largest bf16: +inf
}

TEST(Bf16, DoubleRoundsOnce) {
  // Just above the bf16 tie 1 + 2^-8, but so close that float rounding lands on the tie:
  // double -> float -> bf16 gives 1.0, the correct rounding is 1 + 2^-7.
  const double x = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(float_to_bf16(static_cast<float>(x)), 0x3F80);
  EXPECT_EQ(double_to_bf16(x), 0x3F81);
}

TEST(Bf16, RandomFloatsAgreeBetweenFloatAndDoublePaths) {
  std::mt19937_64 rng(test::seed_for("Bf16.RandomFloats"));
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    const float f = bits_float(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), double_to_bf16(f)) << std::hex << bits;
  }
}

TEST(Bf16, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bits_float(0x7F800001u)))));  // low payload
  EXPECT_TRUE(std::isnan(bf16_to_float(double_to_bf16(-std::nan("")))));
}

}  // namespace
}  // namespace zyfa::numerics
