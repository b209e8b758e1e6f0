// zyfa_fp8_quantize on the cpu backend: the power-of-two descale, RNE codes, NaN inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

struct Quantized {
  zyfa_status_t status;
  std::vector<uint8_t> codes;
  float descale;
};

// Quantizes a contiguous (1, 1, 1, n) FP32 row.
Quantized quantize_f32(const std::vector<float>& src) {
  Quantized q{ZYFA_STATUS_INTERNAL_ERROR, std::vector<uint8_t>(src.size(), 0xAA), -1.0f};
  zyfa_handle_t h = nullptr;
  EXPECT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
  const auto n = static_cast<int64_t>(src.size());
  d.src = zyfa_tensor_bshd(const_cast<float*>(src.data()), ZYFA_DTYPE_FP32, 1, 1, 1, n);
  d.dst = zyfa_tensor_bshd(q.codes.data(), ZYFA_DTYPE_FP8_E4M3, 1, 1, 1, n);
  d.descale = &q.descale;
  d.backend = ZYFA_BACKEND_CPU;
  q.status = zyfa_fp8_quantize(h, &d);
  EXPECT_EQ(q.status, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);
  return q;
}

std::vector<float> random_row(size_t n, double std, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, std);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(nd(rng));
  return v;
}

TEST(Quantize, DescaleIsExactPowerOfTwo) {
  const uint64_t seed = seed_for("Quantize.DescaleIsExactPowerOfTwo");
  for (int k : {-20, -3, 0, 1, 7, 30}) {
    std::vector<float> src = random_row(64, 1.0, seed + k);
    for (float& x : src) x = std::ldexp(std::fmin(std::fabs(x), 400.0f), k - 9);
    src[17] = std::ldexp(448.0f, k);  // amax exactly 448 * 2^k: descale 2^k, no rounding up
    EXPECT_EQ(quantize_f32(src).descale, std::ldexp(1.0f, k)) << "k = " << k;
    src[17] = std::nextafter(std::ldexp(448.0f, k), INFINITY);  // just above: 2^(k+1)
    EXPECT_EQ(quantize_f32(src).descale, std::ldexp(1.0f, k + 1)) << "k = " << k;
  }
}

TEST(Quantize, ZeroInputHasDescaleOne) {
  const Quantized q = quantize_f32(std::vector<float>(40, 0.0f));
  EXPECT_EQ(q.descale, 1.0f);
  for (uint8_t c : q.codes) EXPECT_EQ(c, 0);
}

TEST(Quantize, TinyInputKeepsNormalDescale) {
  std::vector<float> src(8, std::ldexp(1.0f, -140));  // amax / 448 is below 2^-126
  const Quantized q = quantize_f32(src);
  EXPECT_EQ(q.descale, std::ldexp(1.0f, -126));
  EXPECT_TRUE(std::isnormal(q.descale));
}

TEST(Quantize, EveryCodeRoundTrips) {
  // Every finite e4m3 value times 2^5, with 448 present: descale 2^5 and the codes come back.
  std::vector<float> src;
  std::vector<uint8_t> want;
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;  // NaN codes
    src.push_back(std::ldexp(numerics::e4m3_to_float(static_cast<uint8_t>(c)), 5));
    want.push_back(static_cast<uint8_t>(c));
  }
  const Quantized q = quantize_f32(src);
  EXPECT_EQ(q.descale, 32.0f);
  EXPECT_EQ(q.codes, want);
}

TEST(Quantize, RoundsToNearestEven) {
  // 448 fixes the descale at 1. 1 + 1/16 lies halfway between 1 (code 0x38, even mantissa)
  // and 1.125 (0x39): ties go to 0x38; 1 + 3/16 goes to 1.25 (0x3A); just above a tie rounds up.
  // Subnormal ties (quantum 2^-9): 2^-10 goes to 0, 3 * 2^-10 to 2 * 2^-9 (code 0x02).
  const std::vector<float> src = {448.0f, 1.0625f, 1.1875f, std::nextafter(1.0625f, 2.0f),
                                  -1.0625f, std::ldexp(1.0f, -10), std::ldexp(3.0f, -10)};
  const Quantized q = quantize_f32(src);
  EXPECT_EQ(q.descale, 1.0f);
  const std::vector<uint8_t> want = {0x7E, 0x38, 0x3A, 0x39, 0xB8, 0x00, 0x02};
  EXPECT_EQ(q.codes, want);
}

TEST(Quantize, NonFiniteInputGivesNaNDescale) {
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> src = random_row(32, 1.0, seed_for("Quantize.NaN"));
    src[5] = bad;
    const Quantized q = quantize_f32(src);
    EXPECT_TRUE(std::isnan(q.descale)) << bad;
    for (uint8_t c : q.codes) EXPECT_EQ(c & 0x7F, 0x7F) << "codes must not look valid";
  }
}

TEST(Quantize, StridedBf16Source) {
  // A (2, 5, 3, 128) BF16 source in bhsd order, written to a bshd destination.
  const int64_t B = 2, S = 5, H = 3, D = 128;
  const std::vector<float> vals = random_row(B * S * H * D, 3.0, seed_for("Quantize.Bf16"));
  std::vector<uint16_t> src(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) src[i] = numerics::float_to_bf16(vals[i]);
  std::vector<uint8_t> dst(vals.size(), 0xAA);
  float descale = -1;
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
  d.src = zyfa_tensor_bhsd(src.data(), ZYFA_DTYPE_BF16, B, S, H, D);
  d.dst = zyfa_tensor_bshd(dst.data(), ZYFA_DTYPE_FP8_E4M3, B, S, H, D);
  d.descale = &descale;
  d.backend = ZYFA_BACKEND_CPU;
  ASSERT_EQ(zyfa_fp8_quantize(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);
  double amax = 0;
  for (uint16_t b : src) amax = std::fmax(amax, std::fabs(numerics::bf16_to_float(b)));
  ASSERT_EQ(descale, std::exp2(std::ceil(std::log2(amax / 448.0))));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t hh = 0; hh < H; ++hh)
        for (int64_t i = 0; i < D; ++i) {
          const float x = numerics::bf16_to_float(src[((b * H + hh) * S + s) * D + i]);
          const uint8_t c = dst[((b * S + s) * H + hh) * D + i];
          const double back = numerics::e4m3_to_float(c) * descale;
          // RNE: within half a quantum (2^-4 relative, or 2^-10 * descale for subnormals).
          ASSERT_LE(std::fabs(back - x), std::fmax(std::fabs(x) / 16, std::ldexp(descale, -10)))
              << b << "," << s << "," << hh << "," << i;
          ASSERT_EQ(c, numerics::float_to_e4m3(x / descale));
        }
}

}  // namespace
}  // namespace zyfa::test
