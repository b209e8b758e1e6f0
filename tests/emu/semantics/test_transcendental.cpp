// Transcendental semantics: special values from the ISA guides, exact cases, denormal flushing
// and correct rounding against an extended-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "emu/semantics/convert.h"
#include "emu/semantics/transcendental.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu {
namespace {

constexpr uint32_t kMode = mode::kKernelDefault;
constexpr uint32_t kPosInf = 0x7F800000u, kNegInf = 0xFF800000u;
constexpr uint32_t kPosZero = 0u, kNegZero = 0x80000000u;
constexpr uint32_t kDefaultNan = 0xFFC00000u;

uint32_t b(float f) { return bits_from_f32(f); }

TEST(Transcendental, SpecialValues) {
  EXPECT_EQ(v_exp_f32(kNegInf, kMode), kPosZero);
  EXPECT_EQ(v_exp_f32(kPosInf, kMode), kPosInf);
  EXPECT_EQ(v_exp_f32(kNegZero, kMode), b(1.0f));
  EXPECT_EQ(v_exp_f32(kPosZero, kMode), b(1.0f));
  EXPECT_EQ(v_exp_f32(b(128.0f), kMode), kPosInf);

  EXPECT_EQ(v_log_f32(kPosZero, kMode), kNegInf);
  EXPECT_EQ(v_log_f32(kNegZero, kMode), kNegInf);
  EXPECT_EQ(v_log_f32(b(-1.0f), kMode), kDefaultNan);
  EXPECT_EQ(v_log_f32(kNegInf, kMode), kDefaultNan);
  EXPECT_EQ(v_log_f32(kPosInf, kMode), kPosInf);
  EXPECT_EQ(v_log_f32(b(1.0f), kMode), kPosZero);

  EXPECT_EQ(v_rcp_f32(kPosZero, kMode), kPosInf);
  EXPECT_EQ(v_rcp_f32(kNegZero, kMode), kNegInf);
  EXPECT_EQ(v_rcp_f32(kPosInf, kMode), kPosZero);
  EXPECT_EQ(v_rcp_f32(kNegInf, kMode), kNegZero);
  EXPECT_EQ(v_rcp_f32(b(-2.0f), kMode), b(-0.5f));

  EXPECT_EQ(v_rsq_f32(kPosZero, kMode), kPosInf);
  EXPECT_EQ(v_rsq_f32(kNegZero, kMode), kNegInf);
  EXPECT_EQ(v_rsq_f32(kPosInf, kMode), kPosZero);
  EXPECT_EQ(v_rsq_f32(kNegInf, kMode), kDefaultNan);
  EXPECT_EQ(v_rsq_f32(b(4.0f), kMode), b(0.5f));

  EXPECT_EQ(v_sqrt_f32(kNegZero, kMode), kNegZero);
  EXPECT_EQ(v_sqrt_f32(kPosInf, kMode), kPosInf);
  EXPECT_EQ(v_sqrt_f32(b(-2.0f), kMode), kDefaultNan);
  EXPECT_EQ(v_sqrt_f32(kNegInf, kMode), kDefaultNan);
  EXPECT_EQ(v_sqrt_f32(b(9.0f), kMode), b(3.0f));

  // NaN inputs come back quieted, payload and sign kept.
  for (auto fn : {v_exp_f32, v_log_f32, v_rcp_f32, v_rsq_f32, v_sqrt_f32}) {
    EXPECT_EQ(fn(0x7F800001u, kMode), 0x7FC00001u);
    EXPECT_EQ(fn(0xFFC12345u, kMode), 0xFFC12345u);
  }
}

TEST(Transcendental, ExactPowersOfTwo) {
  for (int k = -126; k <= 127; ++k) {
    EXPECT_EQ(v_exp_f32(b(static_cast<float>(k)), kMode), b(std::ldexp(1.0f, k))) << k;
    EXPECT_EQ(v_log_f32(b(std::ldexp(1.0f, k)), kMode), b(static_cast<float>(k))) << k;
    if (k > -126 && k < 127) {  // 2^-127 would be a denormal result (flushed, tested below)
      EXPECT_EQ(v_rcp_f32(b(std::ldexp(1.0f, k)), kMode), b(std::ldexp(1.0f, -k))) << k;
    }
  }
}

// Denormal inputs read as zero and denormal results become zero, whatever MODE allows.
TEST(Transcendental, DenormalsAreFlushed) {
  const uint32_t denorm = 0x00000400u, neg_denorm = 0x80000400u;
  for (uint32_t m : {0u, kMode}) {
    EXPECT_EQ(v_exp_f32(b(-127.0f), m), kPosZero);  // 2^-127 is an f32 denormal
    EXPECT_EQ(v_exp_f32(b(-140.5f), m), kPosZero);
    EXPECT_EQ(v_rcp_f32(denorm, m), kPosInf);
    EXPECT_EQ(v_rcp_f32(neg_denorm, m), kNegInf);
    EXPECT_EQ(v_rcp_f32(b(std::ldexp(1.0f, 127)), m), kPosZero);  // 2^-127 result
    EXPECT_EQ(v_log_f32(denorm, m), kNegInf);
    EXPECT_EQ(v_sqrt_f32(neg_denorm, m), kNegZero);
    EXPECT_EQ(v_rsq_f32(denorm, m), kPosInf);
    EXPECT_EQ(v_exp_f32(denorm, m), b(1.0f));
  }
}

// rcp, sqrt and rsq are correctly rounded; exp and log match a long double reference rounded
// to f32 (the documented evaluation, within 1 ulp of the exact function by construction).
TEST(Transcendental, RoundingAgainstExtendedReference) {
  std::mt19937 rng(static_cast<uint32_t>(zyfa::test::seed_for("Transcendental/Rounding")));
  int off_by_one_exp = 0, off_by_one_log = 0;
  for (int t = 0; t < 200000; ++t) {
    // Normal positive floats across the range.
    const uint32_t x = ((1u + rng() % 253u) << 23) | (rng() & 0x7FFFFFu);
    const long double xl = f32_from_bits(x);
    const auto rounded = [](long double v) { return bits_from_f32(static_cast<float>(v)); };
    const auto flushed = [](uint32_t r) { return (r & 0x7F800000u) == 0 ? (r & 0x80000000u) : r; };
    ASSERT_EQ(v_rcp_f32(x, kMode), flushed(rounded(1.0L / xl))) << std::hex << x;
    ASSERT_EQ(v_sqrt_f32(x, kMode), rounded(sqrtl(xl))) << std::hex << x;
    ASSERT_EQ(v_rsq_f32(x, kMode), rounded(1.0L / sqrtl(xl))) << std::hex << x;
    const uint32_t lg = v_log_f32(x, kMode), lg_ref = rounded(log2l(xl));
    if (lg != lg_ref) {
      ++off_by_one_log;
      ASSERT_LE(std::abs(static_cast<int64_t>(lg) - static_cast<int64_t>(lg_ref)), 1) << std::hex << x;
    }
    // exp over its useful range [-126, 128).
    const float e = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 254001u) - 126000), -10) ;
    const uint32_t ex = v_exp_f32(b(e), kMode), ex_ref = flushed(rounded(exp2l(static_cast<long double>(e))));
    if (ex != ex_ref) {
      ++off_by_one_exp;
      ASSERT_LE(std::abs(static_cast<int64_t>(ex) - static_cast<int64_t>(ex_ref)), 1) << e;
    }
  }
  // Disagreements with the 64-bit-mantissa reference can only be near-midpoint cases.
  EXPECT_LE(off_by_one_exp, 2);
  EXPECT_LE(off_by_one_log, 2);
}

}  // namespace
}  // namespace zyfa::emu
