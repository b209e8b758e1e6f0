// The exact-accumulation path of the MFMA numerics: sums whose terms span more binades than a
// double holds must still be exact before the single f32 rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "emu/semantics/convert.h"
#include "emu/semantics/exact_sum.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu {
namespace {

float sum_of(float acc, std::vector<double> terms) {
  return f32_from_bits(exact_f32_sum(acc, terms.data(), static_cast<int>(terms.size())));
}

TEST(ExactSum, CancellationAcrossHundredsOfBinades) {
  // A sequential double sum loses the 1 (and the tiny term) against 2^100.
  EXPECT_EQ(sum_of(1.0f, {std::ldexp(1.0, 100), std::ldexp(1.5, -100), -std::ldexp(1.0, 100)}), 1.0f);
  EXPECT_EQ(sum_of(0.0f, {std::ldexp(1.0, 200), 3.0, -std::ldexp(1.0, 200)}), 3.0f);
  EXPECT_EQ(sum_of(-2.0f, {std::ldexp(-1.0, 250), std::ldexp(1.0, 250), std::ldexp(1.0, -260)}), -2.0f);
}

TEST(ExactSum, RoundingUsesEveryBit) {
  const double big = std::ldexp(1.0, 90);
  // 1 + 2^-24 is the midpoint between 1 and 1 + 2^-23: ties to even (1) ...
  EXPECT_EQ(sum_of(1.0f, {std::ldexp(1.0, -24), big, -big}), 1.0f);
  // ... but any further bit, however far below, decides upwards (or downwards).
  EXPECT_EQ(sum_of(1.0f, {std::ldexp(1.0, -24), std::ldexp(1.0, -250), big, -big}),
            std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(sum_of(1.0f, {std::ldexp(1.0, -24), -std::ldexp(1.0, -250), big, -big}), 1.0f);
  EXPECT_EQ(sum_of(1.0f, {-std::ldexp(1.0, -25), -std::ldexp(1.0, -250), big, -big}),
            std::nextafter(1.0f, 0.0f));
  // Odd neighbour: 1 + 2^-23 + 2^-24 ties up to the even 1 + 2^-22.
  EXPECT_EQ(sum_of(std::nextafter(1.0f, 2.0f), {std::ldexp(1.0, -24), big, -big}),
            1.0f + std::ldexp(1.0f, -22));
}

TEST(ExactSum, SubnormalOverflowAndZeroResults) {
  const double big = std::ldexp(1.0, 120);
  EXPECT_EQ(sum_of(0.0f, {std::ldexp(1.0, -140), big, -big}), std::ldexp(1.0f, -140));
  // Halfway between 0 and the smallest subnormal: ties to even (0); a hair more: 2^-149.
  EXPECT_EQ(sum_of(0.0f, {std::ldexp(1.0, -150), big, -big}), 0.0f);
  EXPECT_EQ(sum_of(0.0f, {std::ldexp(1.0, -150), std::ldexp(1.0, -280), big, -big}),
            std::ldexp(1.0f, -149));
  EXPECT_EQ(sum_of(std::ldexp(1.0f, 127), {std::ldexp(1.0, 127), std::ldexp(1.0, -200)}), INFINITY);
  EXPECT_EQ(sum_of(-std::ldexp(1.0f, 127), {-std::ldexp(1.0, 127), std::ldexp(1.0, -200)}), -INFINITY);
  // Exact cancellation gives +0; an all -0 sum stays -0.
  const float z = sum_of(5.0f, {big, -5.0, -big});
  EXPECT_EQ(z, 0.0f);
  EXPECT_FALSE(std::signbit(z));
  EXPECT_TRUE(std::signbit(sum_of(-0.0f, {-0.0, -0.0})));
}

TEST(ExactSum, NonFiniteTermsFollowIeee) {
  EXPECT_TRUE(std::isnan(sum_of(1.0f, {INFINITY, -INFINITY})));
  EXPECT_EQ(sum_of(1.0f, {INFINITY, 2.0}), INFINITY);
  EXPECT_EQ(bits_from_f32(sum_of(NAN, {1.0})), 0x7FC00000u);
}

// Random wide-range terms that cancel in pairs, plus one remainder: the result must be exactly
// the correctly rounded acc + remainder, whatever the order and size of the cancelling terms.
TEST(ExactSum, RandomCancellingPairs) {
  std::mt19937_64 rng(zyfa::test::seed_for("ExactSum/RandomCancellingPairs"));
  std::uniform_int_distribution<int> ex(-280, 280);
  std::uniform_int_distribution<int> mant(1, (1 << 22) - 1);
  for (int t = 0; t < 20000; ++t) {
    std::vector<double> terms;
    for (int p = 0; p < 15; ++p) {
      const double u = std::ldexp(static_cast<double>(mant(rng)), ex(rng) - 22) * (rng() & 1 ? -1 : 1);
      terms.push_back(u);
      terms.push_back(-u);
    }
    const int acc_exp = static_cast<int>(rng() % 60) - 50;
    const float acc = std::ldexp(static_cast<float>(mant(rng)), acc_exp);
    const int rest_exp = acc_exp + static_cast<int>(rng() % 31) - 25;
    const double rest = std::ldexp(static_cast<double>(mant(rng)), rest_exp) * (rng() & 1 ? -1 : 1);
    terms.push_back(rest);
    std::shuffle(terms.begin(), terms.end(), rng);
    // acc + rest spans at most 48 bits here, so the double sum is exact and one cast rounds.
    const float want = static_cast<float>(static_cast<double>(acc) + rest);
    ASSERT_EQ(bits_from_f32(sum_of(acc, terms)), bits_from_f32(want)) << "trial " << t;
  }
}

}  // namespace
}  // namespace zyfa::emu
