// MFMA semantics against matrix products built from the documented layouts.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "mfma_reference.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu::test {
namespace {

struct OpCase {
  MfmaOp op;
  const char* name;  // test name part
  int m, n, k, per_lane;
  Fmt fa, fb;        // for f8f6f4 ops: overridden by the format parameters
  bool f8f6f4, scaled;
  uint32_t opcode;   // VOP3P OP field (LLVM gfx950 MC tests / AMD CDNA4 ISA XML)
};

const OpCase kCases[] = {
    {MfmaOp::F32_16X16X32_BF16, "F32_16x16x32_Bf16", 16, 16, 32, 8, Fmt::BF16, Fmt::BF16, false, false, 53},
    {MfmaOp::F32_32X32X16_BF16, "F32_32x32x16_Bf16", 32, 32, 16, 8, Fmt::BF16, Fmt::BF16, false, false, 55},
    {MfmaOp::F32_16X16X16_BF16, "F32_16x16x16_Bf16", 16, 16, 16, 4, Fmt::BF16, Fmt::BF16, false, false, 97},
    {MfmaOp::F32_32X32X8_BF16, "F32_32x32x8_Bf16", 32, 32, 8, 4, Fmt::BF16, Fmt::BF16, false, false, 96},
    {MfmaOp::F32_16X16X32_F16, "F32_16x16x32_F16", 16, 16, 32, 8, Fmt::F16, Fmt::F16, false, false, 84},
    {MfmaOp::F32_32X32X16_F16, "F32_32x32x16_F16", 32, 32, 16, 8, Fmt::F16, Fmt::F16, false, false, 85},
    {MfmaOp::F32_16X16X16_F16, "F32_16x16x16_F16", 16, 16, 16, 4, Fmt::F16, Fmt::F16, false, false, 77},
    {MfmaOp::F32_32X32X8_F16, "F32_32x32x8_F16", 32, 32, 8, 4, Fmt::F16, Fmt::F16, false, false, 76},
    {MfmaOp::F32_16X16X32_FP8_FP8, "F32_16x16x32_Fp8Fp8", 16, 16, 32, 8, Fmt::E4M3, Fmt::E4M3, false, false, 115},
    {MfmaOp::F32_16X16X32_FP8_BF8, "F32_16x16x32_Fp8Bf8", 16, 16, 32, 8, Fmt::E4M3, Fmt::E5M2, false, false, 114},
    {MfmaOp::F32_16X16X32_BF8_FP8, "F32_16x16x32_Bf8Fp8", 16, 16, 32, 8, Fmt::E5M2, Fmt::E4M3, false, false, 113},
    {MfmaOp::F32_16X16X32_BF8_BF8, "F32_16x16x32_Bf8Bf8", 16, 16, 32, 8, Fmt::E5M2, Fmt::E5M2, false, false, 112},
    {MfmaOp::F32_32X32X16_FP8_FP8, "F32_32x32x16_Fp8Fp8", 32, 32, 16, 8, Fmt::E4M3, Fmt::E4M3, false, false, 119},
    {MfmaOp::F32_32X32X16_FP8_BF8, "F32_32x32x16_Fp8Bf8", 32, 32, 16, 8, Fmt::E4M3, Fmt::E5M2, false, false, 118},
    {MfmaOp::F32_32X32X16_BF8_FP8, "F32_32x32x16_Bf8Fp8", 32, 32, 16, 8, Fmt::E5M2, Fmt::E4M3, false, false, 117},
    {MfmaOp::F32_32X32X16_BF8_BF8, "F32_32x32x16_Bf8Bf8", 32, 32, 16, 8, Fmt::E5M2, Fmt::E5M2, false, false, 116},
    {MfmaOp::F32_16X16X128_F8F6F4, "F32_16x16x128_F8f6f4", 16, 16, 128, 32, Fmt::E4M3, Fmt::E4M3, true, false, 45},
    {MfmaOp::F32_32X32X64_F8F6F4, "F32_32x32x64_F8f6f4", 32, 32, 64, 32, Fmt::E4M3, Fmt::E4M3, true, false, 46},
    {MfmaOp::SCALE_F32_16X16X128_F8F6F4, "Scale_F32_16x16x128_F8f6f4", 16, 16, 128, 32, Fmt::E4M3, Fmt::E4M3, true, true, 45},
    {MfmaOp::SCALE_F32_32X32X64_F8F6F4, "Scale_F32_32x32x64_F8f6f4", 32, 32, 64, 32, Fmt::E4M3, Fmt::E4M3, true, true, 46},
};

constexpr Fmt kF8f6f4Formats[] = {Fmt::E4M3, Fmt::E5M2, Fmt::E2M3, Fmt::E3M2, Fmt::E2M1};

uint32_t format_field(Fmt f) {
  switch (f) {
    case Fmt::E4M3: return 0;
    case Fmt::E5M2: return 1;
    case Fmt::E2M3: return 2;
    case Fmt::E3M2: return 3;
    case Fmt::E2M1: return 4;
    default: return 99;
  }
}


// Operands for one op and format pair, all zero codes and zero C, scales 1.0 (127).
Operands make_operands(const OpCase& oc, Fmt fa, Fmt fb) {
  Operands o;
  o.shape = {oc.m, oc.n, oc.k, oc.per_lane, oc.f8f6f4 && fa != Fmt::E2M1, oc.f8f6f4 && fb != Fmt::E2M1};
  o.fa = fa;
  o.fb = fb;
  o.a_regs = oc.per_lane * fmt_bits(fa) / 32;
  o.b_regs = oc.per_lane * fmt_bits(fb) / 32;
  o.d_regs = oc.m * oc.n / 64;
  o.a_code.assign(oc.m * oc.k, 0);
  o.b_code.assign(oc.k * oc.n, 0);
  o.c.assign(oc.m * oc.n, 0.0f);
  if (oc.scaled) {
    o.sa.assign(oc.m * (oc.k / 32), 127);
    o.sb.assign(oc.n * (oc.k / 32), 127);
  }
  return o;
}

std::vector<uint32_t> run(const OpCase& oc, Operands& o) {
  o.scatter();
  std::vector<uint32_t> d(64 * o.d_regs, 0xDEADBEEFu);
  MfmaArgs args{};
  args.op = oc.op;
  args.a = o.a.data();
  args.b = o.b.data();
  args.c = o.creg.data();
  args.d = d.data();
  if (oc.f8f6f4) {
    args.cbsz = format_field(o.fa);
    args.blgp = format_field(o.fb);
  }
  if (oc.scaled) {
    args.scale_a = o.scale_a.data();
    args.scale_b = o.scale_b.data();
    args.scale_a_sel = o.sel_a;
    args.scale_b_sel = o.sel_b;
  }
  mfma_execute(args);
  return d;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Bitwise comparison of D with the expected logical matrix; NaN must match NaN.
void expect_equal(const Operands& o, const std::vector<uint32_t>& dreg,
                  const std::vector<float>& want, const std::string& what) {
  const std::vector<float> got = o.logical(dreg);
  int bad = 0;
  for (int i = 0; i < o.shape.m; ++i) {
    for (int j = 0; j < o.shape.n; ++j) {
      const float g = got[i * o.shape.n + j], w = want[i * o.shape.n + j];
      const bool ok = std::isnan(w) ? std::isnan(g) : bits_of(g) == bits_of(w);
      if (!ok && bad++ < 5) {
        ADD_FAILURE() << what << ": D[" << i << "][" << j << "] = " << g << " (0x" << std::hex
                      << bits_of(g) << std::dec << "), expected " << w;
      }
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " wrong elements";
}

struct Param {
  OpCase oc;
  Fmt fa, fb;
  std::string name() const {
    std::string n = oc.name;
    if (oc.f8f6f4) n += std::string("_") + fmt_name(fa) + "x" + fmt_name(fb);
    return n;
  }
};

std::vector<Param> all_params() {
  std::vector<Param> ps;
  for (const OpCase& oc : kCases) {
    if (!oc.f8f6f4) {
      ps.push_back({oc, oc.fa, oc.fb});
      continue;
    }
    for (Fmt fa : kF8f6f4Formats) {
      for (Fmt fb : kF8f6f4Formats) ps.push_back({oc, fa, fb});
    }
  }
  return ps;
}

class Mfma : public ::testing::TestWithParam<Param> {};

// Random operands (and random per-lane scales for the scaled ops): every element of D must be
// bit-identical to the documented rule applied to the logical matrices.
TEST_P(Mfma, RandomMatchesDocumentedLayoutAndRule) {
  const Param& p = GetParam();
  const uint64_t seed = zyfa::test::seed_for("Mfma/" + p.name());
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 3; ++rep) {
    Operands o = make_operands(p.oc, p.fa, p.fb);
    for (auto& v : o.a_code) v = random_code(p.fa, rng);
    for (auto& v : o.b_code) v = random_code(p.fb, rng);
    std::uniform_real_distribution<float> cu(-4.0f, 4.0f);
    for (auto& v : o.c) v = cu(rng);
    if (p.oc.scaled) {
      std::uniform_int_distribution<int> su(124, 130);
      for (auto& v : o.sa) v = static_cast<uint8_t>(su(rng));
      for (auto& v : o.sb) v = static_cast<uint8_t>(su(rng));
      o.sel_a = static_cast<uint32_t>(rng() % 4);
      o.sel_b = static_cast<uint32_t>(rng() % 4);
    }
    const std::vector<uint32_t> d = run(p.oc, o);
    expect_equal(o, d, o.expected(), "seed " + std::to_string(seed) + " rep " + std::to_string(rep));
  }
}

// One nonzero in A (row i0, column k0) and one in B (row k0, column j0): D must be C plus their
// product at (i0, j0) and exactly C elsewhere. Every K index is visited, with rows and columns
// cycling, which pins each lane, register and byte/nibble position of both operands and every
// output position.
TEST_P(Mfma, OneHotPinsEveryPosition) {
  const Param& p = GetParam();
  const OpCase& oc = p.oc;
  // Codes of 1.0 and 2.0 per format (so the product 2.0 is exact everywhere).
  const auto one = [](Fmt f) -> uint32_t {
    switch (f) {
      case Fmt::BF16: return 0x3F80;
      case Fmt::F16: return 0x3C00;
      case Fmt::E4M3: return 0x38;
      case Fmt::E5M2: return 0x3C;
      case Fmt::E2M3: return 0x08;
      case Fmt::E3M2: return 0x0C;
      case Fmt::E2M1: return 0x2;
    }
    return 0;
  };
  const auto two = [](Fmt f) -> uint32_t {
    switch (f) {
      case Fmt::BF16: return 0x4000;
      case Fmt::F16: return 0x4000;
      case Fmt::E4M3: return 0x40;
      case Fmt::E5M2: return 0x40;
      case Fmt::E2M3: return 0x10;
      case Fmt::E3M2: return 0x10;
      case Fmt::E2M1: return 0x4;
    }
    return 0;
  };
  ASSERT_EQ(fmt_value(p.fa, one(p.fa)), 1.0);
  ASSERT_EQ(fmt_value(p.fb, two(p.fb)), 2.0);
  for (int k0 = 0; k0 < oc.k; ++k0) {
    const int i0 = (k0 * 5 + k0 / oc.m) % oc.m;
    const int j0 = (k0 * 3 + 1 + k0 / oc.n) % oc.n;
    Operands o = make_operands(oc, p.fa, p.fb);
    for (int idx = 0; idx < oc.m * oc.n; ++idx) o.c[idx] = static_cast<float>(idx % 7) - 3.0f;
    o.a_code[i0 * oc.k + k0] = one(p.fa);
    o.b_code[k0 * oc.n + j0] = two(p.fb);
    const std::vector<uint32_t> d = run(oc, o);
    std::vector<float> want = o.c;
    want[i0 * oc.n + j0] += 2.0f;
    expect_equal(o, d, want, "one-hot k=" + std::to_string(k0));
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Family, Mfma, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) { return info.param.name(); });

const OpCase& case_of(MfmaOp op) {
  for (const OpCase& oc : kCases) {
    if (oc.op == op) return oc;
  }
  throw std::logic_error("no case");
}

// Each of the four scale bytes of the A and B scale registers, chosen by op_sel/op_sel_hi,
// must be the one applied: the other three bytes hold different scales.
TEST(MfmaScale, ByteSelectionByOpSel) {
  for (MfmaOp op : {MfmaOp::SCALE_F32_16X16X128_F8F6F4, MfmaOp::SCALE_F32_32X32X64_F8F6F4}) {
    const OpCase& oc = case_of(op);
    std::mt19937_64 rng(zyfa::test::seed_for("MfmaScale/ByteSelectionByOpSel"));
    for (uint32_t sel_a = 0; sel_a < 4; ++sel_a) {
      for (uint32_t sel_b = 0; sel_b < 4; ++sel_b) {
        Operands o = make_operands(oc, Fmt::E4M3, Fmt::E4M3);
        for (auto& v : o.a_code) v = random_code(Fmt::E4M3, rng);
        for (auto& v : o.b_code) v = random_code(Fmt::E4M3, rng);
        for (size_t x = 0; x < o.sa.size(); ++x) o.sa[x] = static_cast<uint8_t>(125 + (x + sel_a) % 5);
        for (size_t x = 0; x < o.sb.size(); ++x) o.sb[x] = static_cast<uint8_t>(124 + (x * 3 + sel_b) % 7);
        o.sel_a = sel_a;
        o.sel_b = sel_b;
        o.scatter();
        // Fill the unselected bytes with other scales, so a wrong byte changes the result.
        for (int lane = 0; lane < 64; ++lane) {
          for (uint32_t byte = 0; byte < 4; ++byte) {
            if (byte != sel_a) o.scale_a[lane] |= (120u + byte + lane % 3) << (8 * byte);
            if (byte != sel_b) o.scale_b[lane] |= (131u + byte) << (8 * byte);
          }
        }
        std::vector<uint32_t> d(64 * o.d_regs);
        MfmaArgs args{};
        args.op = op;
        args.a = o.a.data();
        args.b = o.b.data();
        args.c = o.creg.data();
        args.d = d.data();
        args.scale_a = o.scale_a.data();
        args.scale_b = o.scale_b.data();
        args.scale_a_sel = sel_a;
        args.scale_b_sel = sel_b;
        mfma_execute(args);
        expect_equal(o, d, o.expected(),
                     std::string(oc.name) + " sel " + std::to_string(sel_a) + "," + std::to_string(sel_b));
      }
    }
  }
}

// The scale of A row i for K block p lives in lane i + M*p: a distinct power of two per (row,
// block) and per (column, block) is recovered exactly by one-hot products.
TEST(MfmaScale, LaneOfEachRowAndBlock) {
  for (MfmaOp op : {MfmaOp::SCALE_F32_16X16X128_F8F6F4, MfmaOp::SCALE_F32_32X32X64_F8F6F4}) {
    const OpCase& oc = case_of(op);
    const int blocks = oc.k / 32;
    for (int p = 0; p < blocks; ++p) {
      Operands o = make_operands(oc, Fmt::E4M3, Fmt::E4M3);
      for (int i = 0; i < oc.m; ++i) o.a_code[i * oc.k + 32 * p + (i % 32)] = 0x38;  // 1.0
      for (int j = 0; j < oc.n; ++j) {
        for (int i = 0; i < oc.m; ++i) o.b_code[(32 * p + (i % 32)) * oc.n + j] = 0x38;
      }
      for (int i = 0; i < oc.m; ++i) {
        for (int q = 0; q < blocks; ++q) o.sa[i * blocks + q] = static_cast<uint8_t>(100 + i + q);
      }
      for (int j = 0; j < oc.n; ++j) {
        for (int q = 0; q < blocks; ++q) o.sb[j * blocks + q] = static_cast<uint8_t>(140 + j - 7 * q);
      }
      const std::vector<uint32_t> d = run(oc, o);
      // Row i of A has a single 1.0 at K = 32p + i%32; that K row of B is all ones, so
      // D[i][j] = 2^(sa(i,p) - 127) * 2^(sb(j,p) - 127).
      std::vector<float> want(oc.m * oc.n);
      for (int i = 0; i < oc.m; ++i) {
        for (int j = 0; j < oc.n; ++j) {
          want[i * oc.n + j] = std::ldexp(1.0f, (100 + i + p) - 127 + (140 + j - 7 * p) - 127);
        }
      }
      expect_equal(o, d, want, std::string(oc.name) + " block " + std::to_string(p));
      EXPECT_EQ(want, o.expected());
    }
  }
}

// E8M0 0xFF is NaN: it poisons exactly the outputs whose row (A) or column (B) uses that block.
TEST(MfmaScale, NanScalePoisonsItsBlockOnly) {
  for (MfmaOp op : {MfmaOp::SCALE_F32_16X16X128_F8F6F4, MfmaOp::SCALE_F32_32X32X64_F8F6F4}) {
    const OpCase& oc = case_of(op);
    std::mt19937_64 rng(zyfa::test::seed_for("MfmaScale/NanScalePoisonsItsBlockOnly"));
    Operands o = make_operands(oc, Fmt::E4M3, Fmt::E4M3);
    for (auto& v : o.a_code) v = random_code(Fmt::E4M3, rng);
    for (auto& v : o.b_code) v = random_code(Fmt::E4M3, rng);
    const int blocks = oc.k / 32;
    o.sa[3 * blocks + 1] = 0xFF;   // A row 3, block 1
    o.sb[5 * blocks + 0] = 0xFF;   // B column 5, block 0
    const std::vector<uint32_t> d = run(oc, o);
    const std::vector<float> got = o.logical(d);
    const std::vector<float> want = o.expected();
    for (int i = 0; i < oc.m; ++i) {
      for (int j = 0; j < oc.n; ++j) {
        const bool poisoned = i == 3 || j == 5;
        EXPECT_EQ(std::isnan(got[i * oc.n + j]), poisoned) << oc.name << " D[" << i << "][" << j << "]";
        if (!poisoned) {
          EXPECT_EQ(bits_of(got[i * oc.n + j]), bits_of(want[i * oc.n + j]));
        }
      }
    }
  }
}

// The documented accumulation: a K block is summed exactly (no intermediate rounding) and the
// running value is rounded to f32 once per block.
TEST(MfmaNumerics, BlockSumIsExactAndRoundedOncePerBlock) {
  // Within one block: 2^24 + 1 - 2^24 is 1 exactly (a sequential f32 sum would give 0).
  {
    const OpCase& oc = case_of(MfmaOp::F32_16X16X32_BF16);
    Operands o = make_operands(oc, Fmt::BF16, Fmt::BF16);
    o.a_code[0] = 0x4B80;  // 2^24
    o.a_code[1] = 0x3F80;  // 1
    o.a_code[2] = 0xCB80;  // -2^24
    for (int k = 0; k < 3; ++k) o.b_code[k * oc.n + 0] = 0x3F80;
    const std::vector<float> got = o.logical(run(oc, o));
    EXPECT_EQ(got[0], 1.0f);
  }
  // Across blocks: block 0 gives 2^24, block 1 adds 1 (2^24 + 1 rounds to even: 2^24), block 2
  // subtracts 2^24: the documented per-block rounding yields 0, an exact whole-K sum 1.
  {
    const OpCase& oc = case_of(MfmaOp::SCALE_F32_16X16X128_F8F6F4);
    Operands o = make_operands(oc, Fmt::E4M3, Fmt::E4M3);
    o.a_code[0] = 0x38;       // A[0][0] = 1 (block 0)
    o.a_code[32] = 0x38;      // A[0][32] = 1 (block 1)
    o.a_code[64] = 0xB8;      // A[0][64] = -1 (block 2)
    o.b_code[0 * oc.n] = 0x38;
    o.b_code[32 * oc.n] = 0x38;
    o.b_code[64 * oc.n] = 0x38;
    o.sa[0 * 4 + 0] = 127 + 24;  // block 0 scaled by 2^24
    o.sa[0 * 4 + 2] = 127 + 24;  // block 2 scaled by 2^24
    const std::vector<float> got = o.logical(run(oc, o));
    EXPECT_EQ(got[0], 0.0f);
    EXPECT_EQ(o.expected()[0], 0.0f);
  }
}

TEST(MfmaNumerics, SubnormalInputsAndOutputsAreKept) {
  const OpCase& oc = case_of(MfmaOp::F32_16X16X32_FP8_FP8);
  Operands o = make_operands(oc, Fmt::E4M3, Fmt::E4M3);
  o.a_code[0] = 0x01;  // 2^-9, the smallest e4m3 subnormal
  o.b_code[0] = 0x01;
  o.c[0] = std::ldexp(1.0f, -140);  // an f32 subnormal accumulator
  const std::vector<float> got = o.logical(run(oc, o));
  EXPECT_EQ(got[0], std::ldexp(1.0f, -18) + std::ldexp(1.0f, -140));
  EXPECT_EQ(got[1], 0.0f);
}

TEST(MfmaNumerics, InfinityTimesZeroIsNan) {
  const OpCase& oc = case_of(MfmaOp::F32_16X16X32_BF8_BF8);
  Operands o = make_operands(oc, Fmt::E5M2, Fmt::E5M2);
  o.a_code[0 * oc.k + 0] = 0x7C;  // A[0][0] = +inf, B row 0 is all +0: row 0 of D is NaN
  o.a_code[1 * oc.k + 1] = 0x7C;  // A[1][1] = +inf, B row 1 is all 1.0: row 1 of D is +inf
  for (int j = 0; j < oc.n; ++j) o.b_code[1 * oc.n + j] = 0x3C;
  const std::vector<float> got = o.logical(run(oc, o));
  for (int j = 0; j < oc.n; ++j) {
    EXPECT_TRUE(std::isnan(got[0 * oc.n + j])) << j;
    EXPECT_EQ(got[1 * oc.n + j], INFINITY) << j;
    EXPECT_EQ(got[2 * oc.n + j], 0.0f) << j;
  }
}

TEST(MfmaNumerics, CMayAliasD) {
  const OpCase& oc = case_of(MfmaOp::F32_32X32X16_BF16);
  std::mt19937_64 rng(zyfa::test::seed_for("MfmaNumerics/CMayAliasD"));
  Operands o = make_operands(oc, Fmt::BF16, Fmt::BF16);
  for (auto& v : o.a_code) v = random_code(Fmt::BF16, rng);
  for (auto& v : o.b_code) v = random_code(Fmt::BF16, rng);
  for (size_t x = 0; x < o.c.size(); ++x) o.c[x] = static_cast<float>(x) * 0.25f;
  o.scatter();
  std::vector<uint32_t> acc = o.creg;
  MfmaArgs args{};
  args.op = oc.op;
  args.a = o.a.data();
  args.b = o.b.data();
  args.c = acc.data();
  args.d = acc.data();
  mfma_execute(args);
  expect_equal(o, acc, o.expected(), "aliased C/D");
}

TEST(MfmaInfo, RegisterCountsFollowFormats) {
  for (MfmaOp op : {MfmaOp::F32_16X16X128_F8F6F4, MfmaOp::SCALE_F32_32X32X64_F8F6F4}) {
    // LLVM gfx950 MC/MCA tests: v[4:11] for FP8 (cbsz/blgp 0, 1), v[4:9] for FP6 (2, 3),
    // v[4:7] for FP4 (4).
    const int want[] = {8, 8, 6, 6, 4};
    for (uint32_t f = 0; f < 5; ++f) {
      EXPECT_EQ(mfma_info(op, f, 0).a_regs, want[f]);
      EXPECT_EQ(mfma_info(op, 0, f).b_regs, want[f]);
    }
  }
  EXPECT_EQ(mfma_info(MfmaOp::F32_16X16X32_BF16).a_regs, 4);
  EXPECT_EQ(mfma_info(MfmaOp::F32_16X16X16_BF16).a_regs, 2);
  EXPECT_EQ(mfma_info(MfmaOp::F32_32X32X16_FP8_FP8).a_regs, 2);
  EXPECT_EQ(mfma_info(MfmaOp::F32_32X32X16_FP8_FP8).d_regs, 16);
  EXPECT_EQ(mfma_info(MfmaOp::F32_16X16X32_FP8_FP8).d_regs, 4);
}

TEST(MfmaInfo, PassCounts) {
  EXPECT_EQ(mfma_passes(MfmaOp::F32_16X16X32_BF16), 4);
  EXPECT_EQ(mfma_passes(MfmaOp::F32_32X32X16_BF16), 8);
  EXPECT_EQ(mfma_passes(MfmaOp::F32_16X16X32_FP8_FP8), 4);
  EXPECT_EQ(mfma_passes(MfmaOp::F32_32X32X16_FP8_FP8), 8);
  // Any FP8 operand: 8 / 16 passes; FP6/FP4 only: 4 / 8 (gfx950-facts.md).
  EXPECT_EQ(mfma_passes(MfmaOp::SCALE_F32_16X16X128_F8F6F4, 0, 0), 8);
  EXPECT_EQ(mfma_passes(MfmaOp::SCALE_F32_16X16X128_F8F6F4, 4, 1), 8);
  EXPECT_EQ(mfma_passes(MfmaOp::SCALE_F32_16X16X128_F8F6F4, 4, 2), 4);
  EXPECT_EQ(mfma_passes(MfmaOp::SCALE_F32_32X32X64_F8F6F4, 0, 0), 16);
  EXPECT_EQ(mfma_passes(MfmaOp::SCALE_F32_32X32X64_F8F6F4, 3, 4), 8);
  const MfmaWaitStates w8 = mfma_wait_states(8);
  EXPECT_EQ(w8.srcc_overlapped, 10);
  EXPECT_EQ(w8.srcab_or_valu_read, 12);
  EXPECT_EQ(w8.valu_war_srcc, 7);
  EXPECT_EQ(w8.srcc_same, 0);
  const MfmaWaitStates w16 = mfma_wait_states(16);
  EXPECT_EQ(w16.srcab_or_valu_read, 20);
  EXPECT_EQ(w16.srcc_overlapped, 18);
  EXPECT_EQ(mfma_wait_states(2).srcab_or_valu_read, 5);
  EXPECT_EQ(mfma_wait_states(2).srcc_same, 2);
  EXPECT_EQ(mfma_wait_states(4).srcab_or_valu_read, 8);
}

TEST(MfmaInfo, OpcodesRoundTrip) {
  for (const OpCase& oc : kCases) {
    EXPECT_EQ(mfma_opcode(oc.op), oc.opcode) << oc.name;
    const auto back = mfma_op_from_opcode(oc.opcode, oc.scaled);
    ASSERT_TRUE(back.has_value()) << oc.name;
    EXPECT_EQ(*back, oc.op) << oc.name;
    EXPECT_EQ(mfma_is_scaled(oc.op), oc.scaled);
    EXPECT_EQ(mfma_is_f8f6f4(oc.op), oc.f8f6f4);
  }
  EXPECT_FALSE(mfma_op_from_opcode(44, false).has_value());  // v_mfma_ld_scale_b32 prefix
  EXPECT_FALSE(mfma_op_from_opcode(53, true).has_value());
  EXPECT_STREQ(mfma_name(MfmaOp::SCALE_F32_32X32X64_F8F6F4), "v_mfma_scale_f32_32x32x64_f8f6f4");
}

TEST(MfmaErrors, UnsupportedFieldsThrowNamingTheOp) {
  const auto expect_throw = [](MfmaArgs args, const char* needle) {
    try {
      mfma_execute(args);
      ADD_FAILURE() << "no exception for " << needle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<uint32_t> regs(64 * 16, 0), scale(64, 0x7F7F7F7Fu);
  MfmaArgs valid{};
  valid.a = valid.b = valid.c = regs.data();
  valid.d = regs.data();
  valid.op = MfmaOp::SCALE_F32_16X16X128_F8F6F4;
  valid.scale_a = valid.scale_b = scale.data();
  // Each case changes one field of the valid scaled MFMA above.
  const std::pair<std::function<void(MfmaArgs&)>, const char*> cases[] = {
      {[](MfmaArgs& a) { a.cbsz = 5; }, "v_mfma_scale_f32_16x16x128_f8f6f4: cbsz = 5"},
      {[](MfmaArgs& a) { a.blgp = 7; }, "blgp = 7"},
      {[](MfmaArgs& a) { a.scale_b = nullptr; }, "scale operands missing"},
      {[](MfmaArgs& a) { a.scale_a_sel = 4; }, "scale byte select"},
      {[](MfmaArgs& a) { a.abid = 1; }, "abid = 1"},
      {[](MfmaArgs& a) { a.op = MfmaOp::F32_32X32X16_BF16, a.cbsz = 1; }, "v_mfma_f32_32x32x16_bf16: cbsz = 1"},
  };
  for (const auto& [change, needle] : cases) {
    MfmaArgs args = valid;
    change(args);
    expect_throw(args, needle);
  }
  EXPECT_THROW(mfma_info(MfmaOp::F32_32X32X64_F8F6F4, 6, 0), std::runtime_error);
}

}  // namespace
}  // namespace zyfa::emu::test
