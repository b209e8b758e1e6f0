// MFMA wait-state rules decided in elapsed SIMD cycles under the hardware rule set
// (docs/emulator.md, "Hazards in elapsed cycles"), on a kernel compiled by clang
// (tests/emu/hip/mfma_cover.hip): MFMA results read 3 wait states after the MFMA where gfx950
// asks for 8. With 8 waves the other wave on each SIMD fills the cycles (a warning with the
// slack under hardware, a fault under strict); with 4 waves nothing does (a fault under both).
#include <cmath>
#include <random>
#include <string>

#include "kernel_harness.h"
#include "emu/timing/cycle_hazards.h"

namespace zyfa::emu::test {
namespace {

float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
double bf16(uint32_t word, int half) { return u2f(half ? word & 0xFFFF0000u : word << 16); }

// in: A and B of the upper-half waves as bf16 pairs (normal, std 1), the chains' start values
// and factor (mfma_cover.hip). Values are rounded to bf16 by truncation: any bf16 will do.
std::vector<uint32_t> cover_inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  std::vector<uint32_t> in(2561);
  for (size_t i = 0; i < 2048; ++i) in[i] = (f2u(n(rng)) >> 16) | (f2u(n(rng)) & 0xFFFF0000u);
  for (size_t i = 2048; i < 2560; ++i) in[i] = f2u(n(rng));
  in[2560] = f2u(0.5f + 0.4f * std::uniform_real_distribution<float>(0.f, 1.f)(rng));
  return in;
}

TestKernels::Run run_cover(uint32_t waves, RuleSet rules, const std::vector<uint32_t>& in, uint64_t seed) {
  TestKernels k("mfma_cover");
  const uint32_t block[3] = {64 * waves, 1, 1}, grid[3] = {1, 1, 1};
  return k.run3("mfma_cover", size_t(waves) * 256, in, {}, block, grid, seed, 1, rules);
}

// Every output against fp64: the MFMA waves' 16x16 products (lane l, register r: row
// 4 (l / 16) + r, column l % 16; A row i and B column n hold k = 4 (l / 16) + j in element j
// of lane i + 16 (k / 4) resp. n + 16 (k / 4)), the chain waves' 48 steps; the words no wave
// writes keep their poison.
void expect_outputs(const std::vector<uint32_t>& out, const std::vector<uint32_t>& in, uint32_t waves) {
  const uint32_t half = waves / 2;
  auto elem = [&](size_t base, int lane, int k) { return bf16(in[base + 2 * lane + (k % 4) / 2], k % 2); };
  for (uint32_t w = 0; w < waves; ++w) {
    for (int r = 0; r < 4; ++r)
      for (int l = 0; l < 64; ++l) {
        const uint32_t got = out[(w * 4 + r) * 64 + l];
        if (w < half) {
          if (r > 0) {
            EXPECT_EQ(got, 0xDEADBEEFu) << "wave " << w << " wrote word " << (w * 4 + r) * 64 + l;
            continue;
          }
          double x = u2f(in[2048 + w * 64 + l]);
          const double c = u2f(in[2560]);
          for (int i = 0; i < 48; ++i) x = x * c + 0.25;
          ASSERT_TRUE(std::isfinite(u2f(got))) << "chain wave " << w << " lane " << l;
          EXPECT_NEAR(u2f(got), x, 1e-5 * (std::fabs(x) + 1)) << "chain wave " << w << " lane " << l;
          continue;
        }
        const size_t m = w - half;
        const int i = 4 * (l / 16) + r, n = l % 16;
        double want = 0, mag = 0;
        for (int k = 0; k < 16; ++k) {
          const double t = elem(m * 128, i + 16 * (k / 4), k) * elem(1024 + m * 128, n + 16 * (k / 4), k);
          want += t;
          mag += std::fabs(t);
        }
        ASSERT_TRUE(std::isfinite(u2f(got))) << "MFMA wave " << w << " register " << r << " lane " << l;
        EXPECT_NEAR(u2f(got), want, 1e-6 * mag + 1e-30) << "MFMA wave " << w << " register " << r << " lane " << l;
      }
  }
}

uint64_t fresh_seed() { return std::random_device{}(); }

TEST(CycleHazards, ReadCoveredByTheOtherWaveOfItsSimdWarnsUnderHardware) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto in = cover_inputs(seed);
  const auto r = run_cover(8, RuleSet::kHardware, in, seed);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  expect_outputs(r.out, in, 8);
  // The four reads of each MFMA wave: one warning per pc, each issued by the 4 MFMA waves.
  int reads = 0;
  for (const RuleWarning& w : r.result.warnings) {
    SCOPED_TRACE(w.text);
    ASSERT_EQ(w.rule, "mfma-read");
    EXPECT_EQ(w.instruction, "v_mov_b32_e32");
    EXPECT_EQ(w.required, 8);
    EXPECT_GE(w.given, 3);
    EXPECT_EQ(w.count, 4u);
    EXPECT_GE(w.slack_cycles, 0);
    EXPECT_NE(w.text.find("least slack"), std::string::npos);
    ++reads;
  }
  EXPECT_EQ(reads, 4);
}

TEST(CycleHazards, SameKernelFaultsUnderStrict) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto r = run_cover(8, RuleSet::kStrict, cover_inputs(seed), seed);
  ASSERT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.find("a VALU read of v40 3 wait state(s) after the 4-pass MFMA that writes it; gfx950 "
                                "requires 8"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.result.error.find("MI355X"), std::string::npos) << r.result.error;
  EXPECT_TRUE(r.result.warnings.empty());
}

TEST(CycleHazards, OneWavePerSimdFaultsUnderHardware) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto r = run_cover(4, RuleSet::kHardware, cover_inputs(seed), seed);
  ASSERT_FALSE(r.result.ok) << "the 4-wave kernel's early reads passed under hardware";
  const std::string& e = r.result.error;
  EXPECT_NE(e.find("a VALU read of v40 3 wait state(s) after the 4-pass MFMA"), std::string::npos) << e;
  EXPECT_NE(e.find("rule mfma-read"), std::string::npos) << e;
  // "E cycle(s) elapsed on the MI355X model ..., N needed": the reading wave alone on its SIMD.
  const size_t at = e.find(" cycle(s) elapsed on the MI355X model");
  ASSERT_NE(at, std::string::npos) << e;
  const size_t start = e.rfind(' ', at - 1) + 1;
  const uint64_t elapsed = std::stoull(e.substr(start, at - start));
  const std::string needed = std::to_string(timing::cycles_for_wait_states(8)) + " needed";
  EXPECT_NE(e.find(needed), std::string::npos) << e;
  EXPECT_LT(elapsed, timing::cycles_for_wait_states(8)) << e;
  EXPECT_NE(e.find("workgroup (0,0,0) wave 2"), std::string::npos) << e;
}

// Every MFMA rule through the replay: the one-wave kernels of test_emu_hazards.cpp, one wait
// state short, fault under hardware too (a wave alone on its SIMD has only its own cycles),
// now naming the rule and the cycles; with the exact count they run without a warning. The
// VALU-to-MFMA rule stays counted per wave under both sets.
struct RuleCase {
  const char* kernel;  // k_<kernel>_ok gives the exact count, k_<kernel>_short one fewer
  const char* rule;    // nullptr: a rule counted per wave
};

class CycleRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(CycleRule, OneWaveShortByOneFaultsUnderHardware) {
  TestKernels k("hazards");
  const RuleCase c = GetParam();
  const uint32_t block[3] = {64, 1, 1}, grid[3] = {1, 1, 1};
  auto run = [&](const char* variant) {
    return k.run3(std::string("k_") + c.kernel + variant, 64 * 16, {}, {}, block, grid, 1, 1, RuleSet::kHardware);
  };
  const auto ok = run("_ok");
  EXPECT_TRUE(ok.result.ok) << c.kernel << ": " << ok.result.error;
  EXPECT_TRUE(ok.result.warnings.empty()) << c.kernel << ": " << ok.result.warnings[0].text;
  const auto bad = run("_short");
  ASSERT_FALSE(bad.result.ok) << c.kernel << " one short ran without a hazard report under hardware";
  const std::string& e = bad.result.error;
  EXPECT_NE(e.find("hazard"), std::string::npos) << e;
  if (c.rule) {
    EXPECT_NE(e.find(std::string("rule ") + c.rule + ")"), std::string::npos) << e;
    EXPECT_NE(e.find("elapsed on the MI355X model"), std::string::npos) << e;
  } else {
    EXPECT_EQ(e.find("MI355X"), std::string::npos) << e;
  }
}

const RuleCase kRuleCases[] = {
    {"mfma4_read", "mfma-read"}, {"mfma8_read", "mfma-read"}, {"mfma16_read", "mfma-read"},
    {"mfma_store", "mfma-read"}, {"mfma_srca", "mfma-read"}, {"mfma_ds_agpr", "mfma-read"},
    {"mfma_overlap", "mfma-srcc"}, {"mfma_waw", "mfma-overwrite"}, {"ds_load_waw", "mfma-overwrite"},
    {"vmem_load_waw", "mfma-overwrite"}, {"valu_war", "mfma-srcc-war"}, {"ds_load_war", "mfma-srcc-war"},
    {"vmem_load_war", "mfma-srcc-war"}, {"valu_mfma", nullptr},
};

INSTANTIATE_TEST_SUITE_P(
    Hazards, CycleRule, ::testing::ValuesIn(kRuleCases),
    [](const ::testing::TestParamInfo<RuleCase>& i) { return std::string(i.param.kernel); });

// A claim the replay cannot place (its clocks fall past the wave's trace) is a fault, never a
// pass.
TEST(CycleHazards, ClaimTheReplayCannotPlaceFaults) {
  TestKernels k("mfma_cover");
  const KernelInfo* info = k.object().find_kernel("mfma_cover");
  ASSERT_NE(info, nullptr);
  WorkgroupTrace t;
  t.waves.assign(1, {{uint32_t(info->entry), 0, 0}, {uint32_t(info->entry), 0, 0}});
  CycleClaim c;
  c.rule = "mfma-read";
  c.producer_clock = 5;
  c.consumer_clock = 7;
  c.need = 8;
  c.given = 1;
  c.what = "MFMA hazard: test claim";
  const std::map<uint64_t, std::vector<CycleClaim>> claims{{0, {c}}};
  const timing::CycleVerdicts v = timing::decide_cycle_claims(k.object(), *info, 0, {&t}, claims);
  EXPECT_TRUE(v.faulted);
  EXPECT_NE(v.fault.find("MFMA hazard: test claim"), std::string::npos) << v.fault;
  EXPECT_NE(v.fault.find("issued no instruction"), std::string::npos) << v.fault;
  EXPECT_TRUE(v.warnings.empty());
}

}  // namespace
}  // namespace zyfa::emu::test
