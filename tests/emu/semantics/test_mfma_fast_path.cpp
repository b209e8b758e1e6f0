// mfma_execute (which takes the e4m3 x e4m3 and bf16 x bf16 shortcuts of mfma_fast.cpp where
// they apply), on lane-major and on register-major registers, against
// mfma_execute_general (the per-term exact path) on the same registers: every bit of D must
// agree, on random operands, special values, worst-case cancellation and double-rounding traps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mfma_reference.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu::test {
namespace {

struct FastCase {
  MfmaOp op;
  const char* name;
  int m, n, k, per_lane;
  bool f8f6f4, scaled;
  int bits = 8;  // element width of A and B
};

const FastCase kFastCases[] = {
    {MfmaOp::F32_16X16X32_FP8_FP8, "F32_16x16x32_Fp8Fp8", 16, 16, 32, 8, false, false},
    {MfmaOp::F32_32X32X16_FP8_FP8, "F32_32x32x16_Fp8Fp8", 32, 32, 16, 8, false, false},
    {MfmaOp::F32_16X16X32_FP8_BF8, "F32_16x16x32_Fp8Bf8", 16, 16, 32, 8, false, false},
    {MfmaOp::F32_32X32X16_BF8_FP8, "F32_32x32x16_Bf8Fp8", 32, 32, 16, 8, false, false},
    {MfmaOp::F32_16X16X128_F8F6F4, "F32_16x16x128_F8f6f4", 16, 16, 128, 32, true, false},
    {MfmaOp::F32_32X32X64_F8F6F4, "F32_32x32x64_F8f6f4", 32, 32, 64, 32, true, false},
    {MfmaOp::SCALE_F32_16X16X128_F8F6F4, "Scale_F32_16x16x128_F8f6f4", 16, 16, 128, 32, true, true},
    {MfmaOp::SCALE_F32_32X32X64_F8F6F4, "Scale_F32_32x32x64_F8f6f4", 32, 32, 64, 32, true, true},
    {MfmaOp::F32_32X32X16_BF16, "F32_32x32x16_Bf16", 32, 32, 16, 8, false, false, 16},
    {MfmaOp::F32_16X16X32_BF16, "F32_16x16x32_Bf16", 16, 16, 32, 8, false, false, 16},
    {MfmaOp::F32_32X32X8_BF16, "F32_32x32x8_Bf16", 32, 32, 8, 4, false, false, 16},
    {MfmaOp::F32_16X16X16_BF16, "F32_16x16x16_Bf16", 16, 16, 16, 4, false, false, 16},
};

struct FastParam {
  FastCase fc;
  uint32_t cbsz, blgp;  // 0 e4m3, 1 e5m2 (f8f6f4 only)
  std::string name() const {
    std::string n = fc.name;
    if (fc.f8f6f4) n += std::string("_") + (cbsz ? "E5m2" : "E4m3") + "x" + (blgp ? "E5m2" : "E4m3");
    return n;
  }
  bool e4m3_both() const {
    if (fc.f8f6f4) return cbsz == 0 && blgp == 0;
    return fc.op == MfmaOp::F32_16X16X32_FP8_FP8 || fc.op == MfmaOp::F32_32X32X16_FP8_FP8;
  }
  bool bf16() const { return fc.bits == 16; }
};

void PrintTo(const FastParam& p, std::ostream* os) { *os << p.name(); }

std::vector<FastParam> fast_params() {
  std::vector<FastParam> ps;
  for (const FastCase& fc : kFastCases) {
    if (!fc.f8f6f4) {
      ps.push_back({fc, 0, 0});
      continue;
    }
    for (uint32_t a = 0; a < 2; ++a)
      for (uint32_t b = 0; b < 2; ++b) ps.push_back({fc, a, b});
  }
  return ps;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// One instruction's registers, lane-major as MfmaArgs takes them.
struct Regs {
  std::vector<uint32_t> a, b, c, scale_a, scale_b;
  uint32_t sel_a = 0, sel_b = 0;
};

Regs empty_regs(const FastCase& fc) {
  Regs r;
  r.a.assign(64 * fc.per_lane * fc.bits / 32, 0);
  r.b.assign(64 * fc.per_lane * fc.bits / 32, 0);
  r.c.assign(fc.m * fc.n, 0);
  if (fc.scaled) {
    r.scale_a.assign(64, 0x7F7F7F7Fu);  // 1.0 in every byte
    r.scale_b.assign(64, 0x7F7F7F7Fu);
  }
  return r;
}

MfmaArgs args_for(const FastParam& p, const Regs& r, uint32_t* d) {
  MfmaArgs args{};
  args.op = p.fc.op;
  args.a = r.a.data();
  args.b = r.b.data();
  args.c = r.c.data();
  args.d = d;
  args.cbsz = p.cbsz;
  args.blgp = p.blgp;
  if (p.fc.scaled) {
    args.scale_a = r.scale_a.data();
    args.scale_b = r.scale_b.data();
    args.scale_a_sel = r.sel_a;
    args.scale_b_sel = r.sel_b;
  }
  return args;
}

// Lane-major registers (lane l, register r at v[l * regs + r]) register-major (v[r * 64 + l]).
std::vector<uint32_t> register_major(const std::vector<uint32_t>& v) {
  const size_t regs = v.size() / 64;
  std::vector<uint32_t> out(v.size());
  for (size_t l = 0; l < 64; ++l)
    for (size_t r = 0; r < regs; ++r) out[r * 64 + l] = v[l * regs + r];
  return out;
}

// D of both paths, each poisoned with its own pattern first, so an element one path leaves
// unwritten can never agree with the other. mfma_execute runs twice: on the lane-major
// registers and on the same registers register-major (MfmaArgs::register_major, as the
// executor passes its register file; formats without a shortcut are transposed for the
// general path).
void expect_paths_agree(const FastParam& p, const Regs& r, const std::string& what, int* failures) {
  std::vector<uint32_t> fast(r.c.size(), 0x7FBADBADu), general(r.c.size(), 0xFFDEAD01u);
  mfma_execute(args_for(p, r, fast.data()));
  mfma_execute_general(args_for(p, r, general.data()));
  Regs rm = r;
  rm.a = register_major(r.a);
  rm.b = register_major(r.b);
  rm.c = register_major(r.c);
  std::vector<uint32_t> fast_rm(r.c.size(), 0xFF00FF01u);
  MfmaArgs args_rm = args_for(p, rm, fast_rm.data());
  args_rm.register_major = true;
  mfma_execute(args_rm);
  // And accumulating in place, as `v_mfma v[0:15], ..., v[0:15]` does: C and D one buffer.
  std::vector<uint32_t> in_place = rm.c;
  MfmaArgs args_in_place = args_for(p, rm, in_place.data());
  args_in_place.register_major = true;
  args_in_place.c = in_place.data();
  mfma_execute(args_in_place);
  const size_t regs = r.c.size() / 64;
  for (size_t s = 0; s < fast.size(); ++s) {
    const size_t lane = s / regs, reg = s % regs;
    const uint32_t got_rm = fast_rm[reg * 64 + lane], got_in_place = in_place[reg * 64 + lane];
    if ((fast[s] != general[s] || got_rm != general[s] || got_in_place != general[s]) && (*failures)++ < 5) {
      ADD_FAILURE() << what << ": D slot " << s << " (lane " << lane << ", reg " << reg << ") = 0x" << std::hex
                    << fast[s] << " (register-major 0x" << got_rm << ", in place 0x" << got_in_place
                    << "), general path 0x" << general[s];
    }
  }
}

// A C value: random bits, or one of the special and boundary values.
uint32_t random_c(std::mt19937_64& rng) {
  static const float kSpecial[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                                   -std::numeric_limits<float>::denorm_min(), 1.0e-40f,
                                   std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(), 1.0f, -3.5f,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN()};
  const uint32_t r = static_cast<uint32_t>(rng());
  switch (r % 4) {
    case 0: return static_cast<uint32_t>(rng());  // any bits, NaN payloads included
    case 1: return f32_bits(kSpecial[(r >> 8) % (sizeof kSpecial / sizeof kSpecial[0])]);
    default: {
      // Magnitudes near the products' (2^-20..2^20), where rounding decisions happen.
      std::uniform_real_distribution<float> u(-20.0f, 20.0f);
      const float v = std::ldexp(1.0f + static_cast<float>(r >> 9) * 0x1p-23f, static_cast<int>(u(rng)));
      return f32_bits((r & 0x100) ? -v : v);
    }
  }
}

// An 8-bit code: any byte (NaN codes included) or, with `finite`, specials and boundary codes.
uint8_t random_code8(std::mt19937_64& rng, bool finite) {
  static const uint8_t kSpecial[] = {0x00, 0x80, 0x01, 0x81, 0x07, 0x87, 0x08, 0x7E, 0xFE, 0x38, 0xB8};
  const uint32_t r = static_cast<uint32_t>(rng());
  if (r % 3 == 0) return kSpecial[(r >> 8) % sizeof kSpecial];
  uint8_t c = static_cast<uint8_t>(r >> 16);
  // In e4m3 0x7F/0xFF are NaN; in e5m2 0x7C-0x7F are Inf/NaN. Avoid both when asked.
  if (finite && (c & 0x7C) == 0x7C) c &= 0xFB;
  return c;
}

// A bf16 code: any bits (Inf/NaN included), specials, or, with `finite`, a finite value whose
// exponent is drawn from a narrow range (bit ranges of a row's products within 46 bits: the
// shortcut) or the whole range (long ranges: the exact fallback).
uint16_t random_bf16(std::mt19937_64& rng, bool finite, bool narrow) {
  static const uint16_t kSpecial[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80};
  const uint32_t r = static_cast<uint32_t>(rng());
  if (r % 5 == 0) return kSpecial[(r >> 8) % (sizeof kSpecial / sizeof kSpecial[0])];
  if (!finite) return static_cast<uint16_t>(r >> 16);
  const uint32_t exp = narrow ? 120 + (r >> 8) % 16 : (r >> 8) % 255;  // never 255 (Inf/NaN)
  return static_cast<uint16_t>(((r >> 31) << 15) | (exp << 7) | ((r >> 16) & 0x7F));
}

void fill_random(const FastParam& p, Regs& r, std::mt19937_64& rng, bool finite) {
  const bool narrow = rng() % 2 == 0;
  for (auto* v : {&r.a, &r.b}) {
    for (auto& w : *v) {
      w = 0;
      if (p.bf16()) {
        w = random_bf16(rng, finite, narrow) | uint32_t(random_bf16(rng, finite, narrow)) << 16;
        continue;
      }
      for (int byte = 0; byte < 4; ++byte) w |= uint32_t(random_code8(rng, finite)) << (8 * byte);
    }
  }
  for (auto& w : r.c) w = finite ? f32_bits(std::ldexp(float(int(rng() % 2001) - 1000), -8)) : random_c(rng);
  if (p.fc.scaled) {
    for (auto* v : {&r.scale_a, &r.scale_b}) {
      for (auto& w : *v) {
        w = 0;
        for (int byte = 0; byte < 4; ++byte) {
          const uint32_t x = static_cast<uint32_t>(rng());
          // Mostly near 1.0, sometimes the extremes (2^-127, 2^127) and, unless finite, NaN.
          uint32_t s = 107 + x % 41;
          if (x % 16 == 0) s = (x >> 8) % 2 ? 0u : 254u;
          if (!finite && x % 64 == 1) s = 0xFF;
          w |= s << (8 * byte);
        }
      }
    }
    r.sel_a = static_cast<uint32_t>(rng() % 4);
    r.sel_b = static_cast<uint32_t>(rng() % 4);
  }
}

class MfmaFastPath : public ::testing::TestWithParam<FastParam> {};

// `reps` register sets drawn from the seed of `tag` (stopping at the first that fails):
// random codes (finite only when `finite`, else on even reps only) and C, then `finish(r,
// rep)` may change them; both paths must agree on each.
template <typename Finish>
void check_random_sets(const FastParam& p, const char* tag, int reps, bool finite, Finish finish) {
  const uint64_t seed = zyfa::test::seed_for(std::string("MfmaFastPath/") + tag + "/" + p.name());
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int rep = 0; rep < reps && failures == 0; ++rep) {
    Regs r = empty_regs(p.fc);
    fill_random(p, r, rng, /*finite=*/finite || rep % 2 == 0);
    finish(r, rep);
    expect_paths_agree(p, r, "seed " + std::to_string(seed) + " rep " + std::to_string(rep), &failures);
  }
}

// Random registers: any codes (NaN codes and NaN scales included: the shortcut must decline
// them), C from random bits and special values.
TEST_P(MfmaFastPath, RandomAndSpecialValuesAgreeWithGeneralPath) {
  check_random_sets(GetParam(), "Random", 24, false, [](Regs&, int) {});
}

// Worst-case cancellation: C = -(A*B rounded), so the result is the rounding error of the
// product sum alone (and C one ulp off, which leaves a few ulps of the small sum).
TEST_P(MfmaFastPath, CancellationAgreesWithGeneralPath) {
  const FastParam& p = GetParam();
  check_random_sets(p, "Cancel", 12, true, [&](Regs& r, int rep) {
    std::fill(r.c.begin(), r.c.end(), 0u);
    std::vector<uint32_t> d(r.c.size());
    mfma_execute_general(args_for(p, r, d.data()));
    for (size_t s = 0; s < d.size(); ++s) {
      uint32_t c = d[s] ^ 0x80000000u;                   // -D
      if (rep % 3 == 1 && (c & 0x7FFFFFFFu) != 0) c += 1;  // one ulp larger in magnitude
      if (rep % 3 == 2 && (c & 0x7FFFFFFFu) != 0) c -= 1;  // one ulp smaller
      r.c[s] = c;
    }
  });
}

// Element `element` (of `bits` bits) of one lane's registers.
uint32_t get_element(const uint32_t* lane_regs, int bits, int element) {
  uint32_t v = 0;
  for (int b = 0; b < bits; ++b) {
    const int bit = element * bits + b;
    v |= ((lane_regs[bit / 32] >> (bit % 32)) & 1u) << b;
  }
  return v;
}

// Every row of A a copy of row 0, as the ones operand of a row-sum MFMA is (the shortcut
// computes the products of one row then), on random registers otherwise.
TEST_P(MfmaFastPath, IdenticalRowsOfAAgreeWithGeneralPath) {
  const FastParam& p = GetParam();
  const FastCase& fc = p.fc;
  check_random_sets(p, "SameRows", 12, false, [&](Regs& r, int) {
    const int regs = fc.per_lane * fc.bits / 32;
    for (int k = 0; k < fc.k; ++k) {
      const Home h0 = operand_home(fc.m, fc.k, fc.per_lane, fc.f8f6f4, 0, k);
      const uint32_t code = get_element(&r.a[h0.lane * regs], fc.bits, h0.element);
      for (int i = 1; i < fc.m; ++i) {
        const Home h = operand_home(fc.m, fc.k, fc.per_lane, fc.f8f6f4, i, k);
        put_element(&r.a[h.lane * regs], fc.bits, h.element, code);
      }
    }
  });
}

// Rows of A and columns of B holding +-big at one K position of the first block and +-tiny at
// another (random positions and signs), C = +-c_magnitude (or one f32 ulp more), and every
// E8M0 scale byte `scale_byte` for the scaled forms: D of both paths must agree.
void check_midpoints(const FastParam& p, const char* tag, float c_magnitude, uint32_t scale_byte) {
  const uint64_t seed = zyfa::test::seed_for(std::string("MfmaFastPath/") + tag + "/" + p.name());
  std::mt19937_64 rng(seed);
  const FastCase& fc = p.fc;
  Operands o;
  o.shape = {fc.m, fc.n, fc.k, fc.per_lane, fc.f8f6f4, fc.f8f6f4};
  o.fa = o.fb = p.bf16() ? Fmt::BF16 : Fmt::E4M3;
  o.a_regs = o.b_regs = fc.per_lane * fc.bits / 32;
  const uint32_t big = p.bf16() ? 0x4380u : 0x78u, tiny = p.bf16() ? 0x3B00u : 0x01u;  // 256, 2^-9
  const uint32_t sign = p.bf16() ? 0x8000u : 0x80u;
  o.d_regs = fc.m * fc.n / 64;
  o.a_code.assign(fc.m * fc.k, 0);
  o.b_code.assign(fc.k * fc.n, 0);
  o.c.assign(fc.m * fc.n, 0.0f);
  int failures = 0;
  for (int rep = 0; rep < 4 && failures == 0; ++rep) {
    // The same two K positions of the first block in every row of A and column of B.
    const int block = fc.k < 32 ? fc.k : 32;
    std::fill(o.a_code.begin(), o.a_code.end(), 0u);
    std::fill(o.b_code.begin(), o.b_code.end(), 0u);
    const int k0 = static_cast<int>(rng() % block);
    const int k1 = (k0 + 1 + static_cast<int>(rng() % (block - 1))) % block;
    for (int i = 0; i < fc.m; ++i) {
      o.a_code[i * fc.k + k0] = big | (rng() % 2 ? sign : 0u);
      o.a_code[i * fc.k + k1] = tiny | (rng() % 2 ? sign : 0u);
    }
    for (int j = 0; j < fc.n; ++j) {
      o.b_code[k0 * fc.n + j] = big | (rng() % 2 ? sign : 0u);
      o.b_code[k1 * fc.n + j] = tiny | (rng() % 2 ? sign : 0u);
    }
    for (auto& c : o.c) {
      const float m = rng() % 2 ? c_magnitude : std::nextafter(c_magnitude, 1.0f);
      c = rng() % 2 ? -m : m;
    }
    o.scatter();
    Regs r;
    r.a = o.a;
    r.b = o.b;
    r.c = o.creg;
    if (fc.scaled) {
      r.scale_a.assign(64, scale_byte * 0x01010101u);
      r.scale_b.assign(64, scale_byte * 0x01010101u);
    }
    expect_paths_agree(p, r, "seed " + std::to_string(seed) + " rep " + std::to_string(rep), &failures);
  }
}

// Sums whose double value lands exactly on an f32 rounding midpoint while the exact value does
// not: C = +-2^40 (f32 ulp 2^17) plus the products 256*256 = 2^16 (half an ulp) and
// 2^-9*2^-9 = 2^-18 (far below the double's last bit at 2^40) with random signs. Rounding the
// double sum to f32 would tie to even; the exact value decides the other way half the time.
TEST_P(MfmaFastPath, DoubleRoundingMidpointsAgreeWithGeneralPath) {
  const FastParam& p = GetParam();
  if (!p.e4m3_both() && !p.bf16()) GTEST_SKIP() << "built from e4m3 or bf16 codes of 256 and 2^-9";
  check_midpoints(p, "Midpoint", 0x1p40f, 0x7F);
}

// The same trap among f32 subnormals, where the midpoint is not one of the double's low bits:
// scales of 2^-83 each put the products at 2^-150 (half the subnormal ulp 2^-149) and 2^-184,
// and C = +-2^-130 makes the double sum's last bit 2^-182, so 2^-184 is rounded away and the
// double sum sits on a subnormal midpoint.
TEST_P(MfmaFastPath, SubnormalMidpointsAgreeWithGeneralPath) {
  const FastParam& p = GetParam();
  if (!p.e4m3_both() || !p.fc.scaled) GTEST_SKIP() << "needs e4m3 codes and E8M0 scales of 2^-83";
  check_midpoints(p, "SubnormalMidpoint", 0x1p-130f, 127 - 83);
}

INSTANTIATE_TEST_SUITE_P(Ops, MfmaFastPath, ::testing::ValuesIn(fast_params()),
                         [](const ::testing::TestParamInfo<FastParam>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::emu::test
