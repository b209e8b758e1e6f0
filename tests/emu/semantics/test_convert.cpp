// Conversion semantics: FP8 (e4m3fn / e5m2), BF16, MX sub-byte formats and E8M0 scales.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "emu/semantics/convert.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu {
namespace {

constexpr uint32_t kNoSat = mode::kKernelDefault;
constexpr uint32_t kSat = mode::kKernelDefault | mode::kFp16Ovfl;

uint32_t bits(float f) { return bits_from_f32(f); }
float flt(uint32_t b) { return f32_from_bits(b); }

// OCP e4m3fn from its definition: bias 7, S.1111.111 NaN, no infinity.
double e4m3_value(uint32_t c) {
  const double s = (c & 0x80) ? -1.0 : 1.0;
  const int e = (c >> 3) & 0xF, m = c & 7;
  if ((c & 0x7F) == 0x7F) return NAN;
  return e == 0 ? s * m * std::ldexp(1.0, -9) : s * (8 + m) * std::ldexp(1.0, e - 10);
}

// OCP e5m2 from its definition: bias 15, exponent 31 is infinity (m = 0) or NaN.
double e5m2_value(uint32_t c) {
  const double s = (c & 0x80) ? -1.0 : 1.0;
  const int e = (c >> 2) & 0x1F, m = c & 3;
  if (e == 31) return m ? NAN : s * INFINITY;
  return e == 0 ? s * m * std::ldexp(1.0, -16) : s * (4 + m) * std::ldexp(1.0, e - 17);
}

// Every e4m3 code through cvt_f32_fp8 (each byte position, the other bytes random) and back
// through cvt_pk_fp8_f32 (both words): finite codes survive exactly, NaN codes give NaN.
TEST(ConvertFp8, AllE4m3CodesRoundTrip) {
  std::mt19937 rng(static_cast<uint32_t>(zyfa::test::seed_for("ConvertFp8/AllE4m3CodesRoundTrip")));
  for (uint32_t code = 0; code < 256; ++code) {
    const double want = e4m3_value(code);
    EXPECT_EQ(std::isnan(decode_e4m3(static_cast<uint8_t>(code))), std::isnan(want)) << code;
    if (!std::isnan(want)) {
      EXPECT_EQ(decode_e4m3(static_cast<uint8_t>(code)), want) << code;
    }
    for (int byte = 0; byte < 4; ++byte) {
      const uint32_t noise = rng() & ~(0xFFu << (8 * byte));
      const uint32_t f = cvt_f32_fp8(noise | (code << (8 * byte)), byte);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(flt(f))) << code;
        continue;
      }
      ASSERT_EQ(flt(f), static_cast<float>(want)) << "code " << code << " byte " << byte;
      ASSERT_EQ(std::signbit(flt(f)), (code & 0x80) != 0) << code;  // -0 stays -0
      for (uint32_t m : {kNoSat, kSat}) {
        const uint32_t old = rng();
        const uint32_t lo = cvt_pk_fp8_f32(f, f, old, false, m);
        EXPECT_EQ(lo, (old & 0xFFFF0000u) | code | (code << 8)) << code;
        const uint32_t hi = cvt_pk_fp8_f32(f, f, old, true, m);
        EXPECT_EQ(hi, (old & 0xFFFFu) | (code << 16) | (code << 24)) << code;
      }
    }
    // The packed form reads the word chosen by word_sel_hi, lower byte first.
    const F32Pair pair = cvt_pk_f32_fp8(0x11000000u | (code << 16), true);
    if (!std::isnan(want)) {
      EXPECT_EQ(flt(pair.lo), static_cast<float>(want));
    }
    EXPECT_EQ(flt(pair.hi), static_cast<float>(e4m3_value(0x11)));
  }
  // NaN input: NaN code with its sign, saturating or not.
  EXPECT_EQ(cvt_pk_fp8_f32(0x7FC00000u, 0xFFC00000u, 0, false, kNoSat), 0xFF7Fu);
  EXPECT_EQ(cvt_pk_fp8_f32(0x7FC00000u, 0xFFC00000u, 0, false, kSat), 0xFF7Fu);
}

TEST(ConvertFp8, AllE5m2CodesRoundTrip) {
  for (uint32_t code = 0; code < 256; ++code) {
    const double want = e5m2_value(code);
    const uint32_t f = cvt_f32_bf8(code << 8, 1);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(flt(f))) << code;
      EXPECT_EQ(cvt_pk_bf8_f32(f, f, 0, false, kNoSat) & 0x7F7Fu, 0x7F7Fu) << code;
      continue;
    }
    ASSERT_EQ(flt(f), static_cast<float>(want)) << code;
    EXPECT_EQ(cvt_pk_bf8_f32(f, f, 0, false, kNoSat), code | (code << 8)) << code;
    EXPECT_EQ(cvt_pk_bf8_f32(f, f, 0, false, kSat), code | (code << 8)) << code;
  }
}

// Round to nearest, ties to even: the midpoint of consecutive codes goes to the even code, one
// f32 ulp either side goes to the nearer code.
TEST(ConvertFp8, NearestEvenTies) {
  for (bool e4m3 : {true, false}) {
    const uint32_t last = e4m3 ? 0x7E : 0x7B;
    for (uint32_t c = 0; c < last; ++c) {
      for (uint32_t sign : {0u, 0x80u}) {
        const double lo = e4m3 ? e4m3_value(c | sign) : e5m2_value(c | sign);
        const double hi = e4m3 ? e4m3_value((c + 1) | sign) : e5m2_value((c + 1) | sign);
        const float mid = static_cast<float>((lo + hi) / 2);
        ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);  // exactly representable
        const uint32_t even = ((c & 1) ? c + 1 : c) | sign;
        const auto cvt = [&](float v) {
          return (e4m3 ? cvt_pk_fp8_f32(bits(v), 0, 0, false, kNoSat)
                       : cvt_pk_bf8_f32(bits(v), 0, 0, false, kNoSat)) & 0xFFu;
        };
        EXPECT_EQ(cvt(mid), even) << "code " << c << " e4m3 " << e4m3;
        const float toward_hi = std::nextafter(mid, static_cast<float>(hi));
        const float toward_lo = std::nextafter(mid, static_cast<float>(lo));
        EXPECT_EQ(cvt(toward_hi), (c + 1) | sign) << c;
        EXPECT_EQ(cvt(toward_lo), c | sign) << c;
      }
    }
  }
}

// MODE.FP16_OVFL selects saturation; without it overflow is NaN (e4m3) / infinity (e5m2).
// Infinite inputs are never clamped.
TEST(ConvertFp8, SaturationFollowsModeFp16Ovfl) {
  const auto e4 = [](float v, uint32_t m) { return cvt_pk_fp8_f32(bits(v), 0, 0, false, m) & 0xFFu; };
  const auto e5 = [](float v, uint32_t m) { return cvt_pk_bf8_f32(bits(v), 0, 0, false, m) & 0xFFu; };
  EXPECT_EQ(e4(448.0f, kNoSat), 0x7Eu);
  EXPECT_EQ(e4(464.0f, kNoSat), 0x7Eu);   // tie between 448 and 480: even mantissa (448)
  EXPECT_EQ(e4(464.5f, kNoSat), 0x7Fu);   // rounds past 448: NaN
  EXPECT_EQ(e4(464.5f, kSat), 0x7Eu);
  EXPECT_EQ(e4(-1.0e6f, kNoSat), 0xFFu);
  EXPECT_EQ(e4(-1.0e6f, kSat), 0xFEu);
  EXPECT_EQ(e4(INFINITY, kNoSat), 0x7Fu);
  EXPECT_EQ(e4(INFINITY, kSat), 0x7Fu);
  EXPECT_EQ(e4(-INFINITY, kSat), 0xFFu);
  EXPECT_EQ(e5(57344.0f, kNoSat), 0x7Bu);
  EXPECT_EQ(e5(61439.0f, kNoSat), 0x7Bu);
  EXPECT_EQ(e5(61440.0f, kNoSat), 0x7Cu);  // tie to even goes up to 65536: infinity
  EXPECT_EQ(e5(61440.0f, kSat), 0x7Bu);
  EXPECT_EQ(e5(-1.0e9f, kSat), 0xFBu);
  EXPECT_EQ(e5(INFINITY, kSat), 0x7Cu);
  EXPECT_EQ(e5(-INFINITY, kNoSat), 0xFCu);
}

TEST(ConvertFp8, DenormalF32InputsFollowMode) {
  const uint32_t tiny_neg = 0x80000001u;  // -2^-149
  const uint32_t flush_mode = 0;          // FP_DENORM = 0: flush f32 inputs
  EXPECT_EQ(cvt_pk_fp8_f32(tiny_neg, 1u, 0, false, flush_mode), 0x0080u);
  EXPECT_EQ(cvt_pk_fp8_f32(tiny_neg, 1u, 0, false, kNoSat), 0x0080u);  // rounds to -0 anyway
  // The smallest e4m3 subnormal and the rounding boundary below it.
  EXPECT_EQ(cvt_pk_fp8_f32(bits(std::ldexp(1.0f, -9)), bits(std::ldexp(1.0f, -10)), 0, false, kNoSat),
            0x0001u);  // 2^-10 is the tie between 0 and 2^-9: even is 0
}

// Scaled conversions use only the exponent of the f32 scale: down-conversion divides by
// 2^(e-127), up-conversion multiplies; E8M0 0xFF (an f32 inf/NaN scale) gives NaN.
TEST(ConvertFp8, ScaledConversionsUseTheScaleExponent) {
  std::mt19937 rng(static_cast<uint32_t>(zyfa::test::seed_for("ConvertFp8/Scaled")));
  std::normal_distribution<float> g(0.0f, 50.0f);
  for (int t = 0; t < 2000; ++t) {
    const float x = g(rng), y = g(rng);
    const int e = static_cast<int>(rng() % 21) - 10;
    const uint32_t scale = bits(std::ldexp(1.0f, e)) | (rng() & 0x7FFFFFu);  // mantissa ignored
    const uint32_t old = rng();
    for (uint32_t m : {kNoSat, kSat}) {
      const uint32_t want = cvt_pk_fp8_f32(bits(std::ldexp(x, -e)), bits(std::ldexp(y, -e)), old, true, m);
      EXPECT_EQ(cvt_scalef32_pk_fp8_f32(bits(x), bits(y), scale, old, true, m), want);
      const uint32_t want5 = cvt_pk_bf8_f32(bits(std::ldexp(x, -e)), bits(std::ldexp(y, -e)), old, false, m);
      EXPECT_EQ(cvt_scalef32_pk_bf8_f32(bits(x), bits(y), scale, old, false, m), want5);
    }
    const uint32_t code = rng() & 0xFFu;
    const uint32_t up = cvt_scalef32_f32_fp8(code << 16, scale, 2);
    const double v = e4m3_value(code);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(flt(up)));
    } else {
      EXPECT_EQ(flt(up), static_cast<float>(std::ldexp(v, e))) << code;
    }
    const F32Pair p = cvt_scalef32_pk_f32_bf8(code | (code << 8), scale, false);
    if (!std::isnan(e5m2_value(code))) {
      EXPECT_EQ(flt(p.hi), static_cast<float>(std::ldexp(e5m2_value(code), e)));
    }
  }
  EXPECT_TRUE(std::isnan(flt(cvt_scalef32_f32_fp8(0x38u, bits(INFINITY), 0))));
  EXPECT_EQ(cvt_scalef32_pk_fp8_f32(bits(1.0f), bits(1.0f), bits(INFINITY), 0, false, kNoSat), 0x7F7Fu);
}

// Independent bf16 rounding: the nearer of the two bf16 neighbours, ties to the even one.
uint16_t bf16_reference(float v) {
  const uint32_t b = bits(v);
  const uint16_t down = static_cast<uint16_t>(b >> 16);
  const uint16_t up = static_cast<uint16_t>(down + 1);
  const double dv = static_cast<double>(v);
  const double vd = static_cast<double>(flt(static_cast<uint32_t>(down) << 16));
  const double vu_bits = static_cast<double>(flt(static_cast<uint32_t>(up) << 16));
  const double vu = std::isinf(vu_bits) ? std::ldexp(1.0, 128) * (v < 0 ? -1 : 1) : vu_bits;
  const double dd = std::fabs(dv - vd), du = std::fabs(vu - dv);
  if (dd < du) return down;
  if (du < dd) return up;
  return (down & 1) ? up : down;
}

TEST(ConvertBf16, NearestEvenAndNanQuieting) {
  std::mt19937 rng(static_cast<uint32_t>(zyfa::test::seed_for("ConvertBf16/NearestEven")));
  const uint32_t m = mode::kKernelDefault;
  for (int t = 0; t < 200000; ++t) {
    uint32_t a = rng(), b = rng();
    if ((a & 0x7F800000u) == 0x7F800000u) a &= 0xBFFFFFFFu;  // keep finite here
    if ((b & 0x7F800000u) == 0x7F800000u) b &= 0xBFFFFFFFu;
    const uint32_t got = cvt_pk_bf16_f32(a, b, m);
    ASSERT_EQ(got & 0xFFFFu, bf16_reference(flt(a))) << std::hex << a;
    ASSERT_EQ(got >> 16, bf16_reference(flt(b))) << std::hex << b;
  }
  // Exact ties: low half 0x8000 goes to even, 0x8001 goes up.
  EXPECT_EQ(cvt_pk_bf16_f32(0x3F808000u, 0x3F818000u, m), 0x3F823F80u);
  EXPECT_EQ(cvt_pk_bf16_f32(0x3F808001u, 0x7F7FFFFFu, m), 0x7F803F81u);  // largest f32 -> inf
  // NaN: quiet bit set, sign and upper payload kept; never rounds into infinity.
  EXPECT_EQ(cvt_pk_bf16_f32(0x7F800001u, 0xFF80FFFFu, m), 0xFFC07FC0u);
  EXPECT_EQ(cvt_pk_bf16_f32(0x7FFFFFFFu, 0x7F800000u, m), 0x7F807FFFu);
  // Denormal f32 inputs flush when MODE disables them.
  EXPECT_EQ(cvt_pk_bf16_f32(0x80400000u, 0x00400000u, 0), 0x00008000u);
  EXPECT_EQ(cvt_pk_bf16_f32(0x80400000u, 0x00400000u, m), 0x00408040u);
}

// OCP MX v1.0 value tables.
TEST(ConvertMx, SubByteAndScaleDecoding) {
  const double e2m1[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  for (uint32_t c = 0; c < 16; ++c) {
    EXPECT_EQ(decode_e2m1(static_cast<uint8_t>(c)), (c & 8 ? -1 : 1) * e2m1[c & 7]) << c;
    EXPECT_EQ(encode_e2m1(decode_e2m1(static_cast<uint8_t>(c))), c == 8 ? 8u : c) << c;
  }
  EXPECT_EQ(decode_e2m3(0x1F), 7.5);
  EXPECT_EQ(decode_e2m3(0x01), 0.125);
  EXPECT_EQ(decode_e2m3(0x3F), -7.5);
  EXPECT_EQ(decode_e3m2(0x1F), 28.0);
  EXPECT_EQ(decode_e3m2(0x01), 0.0625);
  EXPECT_EQ(decode_e3m2(0x04), 0.25);
  for (uint32_t c = 0; c < 64; ++c) {
    EXPECT_EQ(encode_e2m3(decode_e2m3(static_cast<uint8_t>(c))), c) << c;
    EXPECT_EQ(encode_e3m2(decode_e3m2(static_cast<uint8_t>(c))), c) << c;
  }
  EXPECT_EQ(decode_e8m0(127), 1.0);
  EXPECT_EQ(decode_e8m0(0), std::ldexp(1.0, -127));
  EXPECT_EQ(decode_e8m0(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(decode_e8m0(255)));
}

TEST(ConvertF16, Decoding) {
  EXPECT_EQ(decode_f16(0x3C00), 1.0);
  EXPECT_EQ(decode_f16(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(decode_f16(0x7BFF), 65504.0);
  EXPECT_EQ(decode_f16(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(decode_f16(0x7E00)));
}

}  // namespace
}  // namespace zyfa::emu

namespace zyfa::emu {
namespace {

TEST(ConvertF16, PackRoundTowardZero) {
  const uint32_t m = mode::kKernelDefault;
  const auto lo = [m](float v) { return cvt_pkrtz_f16_f32(bits_from_f32(v), 0, m) & 0xFFFFu; };
  EXPECT_EQ(lo(1.0f), 0x3C00u);
  EXPECT_EQ(lo(1.0f + std::ldexp(1.0f, -11)), 0x3C00u);  // the midpoint truncates
  EXPECT_EQ(lo(std::nextafter(1.0f + std::ldexp(1.0f, -10), 0.0f)), 0x3C00u);
  EXPECT_EQ(lo(1.0f + std::ldexp(1.0f, -10)), 0x3C01u);
  EXPECT_EQ(lo(-65535.0f), 0xFBFFu);
  EXPECT_EQ(lo(1.0e10f), 0x7BFFu);
  EXPECT_EQ(lo(-INFINITY), 0xFC00u);
  EXPECT_EQ(lo(std::ldexp(1.0f, -24)), 0x0001u);                 // smallest f16 subnormal
  EXPECT_EQ(lo(std::ldexp(1.0f, -24) * 1.99f), 0x0001u);
  EXPECT_EQ(lo(std::ldexp(1.0f, -25)), 0x0000u);
  EXPECT_EQ(lo(-std::ldexp(1.0f, -14)), 0x8400u);               // smallest normal
  EXPECT_EQ(cvt_pkrtz_f16_f32(bits_from_f32(std::ldexp(1.0f, -24)), 0, 0x30u) & 0xFFFFu, 0u);
  EXPECT_EQ(cvt_pkrtz_f16_f32(0x7F800001u, 0xFFC00000u, m), 0xFE007E00u);
  EXPECT_EQ(cvt_pkrtz_f16_f32(bits_from_f32(2.0f), bits_from_f32(-0.5f), m), 0xB8004000u);
  // Every f16 value converts back to itself (its f32 is exact).
  for (uint32_t h = 0; h < 0x7C00u; ++h) {
    const float v = static_cast<float>(decode_f16(static_cast<uint16_t>(h)));
    ASSERT_EQ(lo(v), h) << h;
    ASSERT_EQ(lo(-v), h | 0x8000u) << h;
  }
}

}  // namespace
}  // namespace zyfa::emu
