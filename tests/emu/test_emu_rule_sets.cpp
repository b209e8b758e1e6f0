// Rule sets: under `strict` (the default) LLVM's conservative wait-state rules stop the kernel;
// under `hardware` a kernel that gives as few wait states as AMD's shipped gfx950 code runs,
// gives the same results as with the full count, and gets one warning per instruction naming
// the rule, the count given and the count LLVM asks for. Fewer still faults under both.
#include <cstdlib>
#include <string>
#include <vector>

#include "emu/emulator.h"
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

const uint32_t kBlock[3] = {64, 1, 1};

// One workgroup of `kernel` under `rules`, `words` output words.
TestKernels::Run run_one(const TestKernels& k, const char* kernel, RuleSet rules, size_t words = 64 * 16) {
  const uint32_t grid[3] = {1, 1, 1};
  return k.run3(kernel, words, {}, {}, kBlock, grid, 1, 1, rules);
}

// `kernel` stops under the strict rule set with `strict_error` and runs to the end under the
// hardware one, whose run is returned.
TestKernels::Run strict_faults_hardware_runs(const TestKernels& k, const char* kernel, const char* strict_error) {
  expect_fault(run_one(k, kernel, RuleSet::kStrict), {strict_error});
  TestKernels::Run hw = run_one(k, kernel, RuleSet::kHardware);
  EXPECT_TRUE(hw.result.ok) << hw.result.error;
  return hw;
}

// A warning of the hardware rule set: its rule, the instruction (part of its text), the wait
// states given and required, how many times, and what its one-line text must name.
struct WantWarning {
  const char* rule;
  const char* instruction;
  int given, required;
  uint64_t count;
  std::vector<std::string> text;
};

void expect_warning(const RuleWarning& w, const WantWarning& want) {
  EXPECT_EQ(w.rule, want.rule);
  EXPECT_NE(w.instruction.find(want.instruction), std::string::npos) << w.instruction;
  EXPECT_EQ(w.given, want.given);
  EXPECT_EQ(w.required, want.required);
  EXPECT_EQ(w.count, want.count);
  for (const std::string& part : want.text) EXPECT_NE(w.text.find(part), std::string::npos) << w.text;
}

std::vector<uint32_t> lds_input() {
  std::vector<uint32_t> in(256);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = 0x5000u + i;
  return in;
}

TEST(EmuRuleSets, M0WriteRightBeforeLoadToLds) {
  TestKernels k("rule_sets");
  const uint32_t grid[3] = {3, 1, 1};
  const auto strict = k.run3("k_m0_lds_dma_no_wait", 64 * 16, lds_input(), {}, kBlock, grid, 1, 1, RuleSet::kStrict);
  ASSERT_FALSE(strict.result.ok);
  EXPECT_NE(strict.result.error.find("LDS-DMA hazard: load to LDS 0 wait state(s) after an SALU write of M0 (needs 1)"),
            std::string::npos) << strict.result.error;
  EXPECT_TRUE(strict.result.warnings.empty());

  const auto hw = k.run3("k_m0_lds_dma_no_wait", 64 * 16, lds_input(), {}, kBlock, grid, 1, 1, RuleSet::kHardware);
  ASSERT_TRUE(hw.result.ok) << hw.result.error;
  EXPECT_EQ(hw.result.rules, RuleSet::kHardware);
  // The same LDS contents as k_load_to_lds, which gives the wait state (test_emu_memory.cpp).
  const auto full = TestKernels("memory").run("k_load_to_lds", 64 * 16, lds_input());
  ASSERT_TRUE(full.result.ok) << full.result.error;
  EXPECT_EQ(hw.out, full.out);
  // Two loads to LDS, each issued short by each of the 3 workgroups' one wave.
  ASSERT_EQ(hw.result.warnings.size(), 2u);
  for (const RuleWarning& w : hw.result.warnings)
    expect_warning(w, {"m0-lds-dma", "global_load_lds", 0, 1, 3,
                       {"m0-lds-dma", "0 wait state(s) given, LLVM asks for 1", "checkReadM0Hazards"}});
  EXPECT_LT(hw.result.warnings[0].pc, hw.result.warnings[1].pc);
}

TEST(EmuRuleSets, ValuSgprReadOneWaitState) {
  TestKernels k("rule_sets");
  const auto hw = strict_faults_hardware_runs(
      k, "k_vcc_read_one_wait", "vcc_lo read by a VALU 1 wait state(s) after a VALU wrote it (needs 2)");
  ASSERT_TRUE(hw.result.ok);
  for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(hw.out[l * 16], l < 10 ? 1u : 0u) << "lane " << l;
  // VCC is two SGPRs read by one instruction: one warning, counted once.
  ASSERT_EQ(hw.result.warnings.size(), 1u);
  expect_warning(hw.result.warnings[0],
                 {"valu-sgpr-valu-read", "v_cndmask_b32", 1, 2, 1, {"1 wait state(s) given, LLVM asks for 2"}});
}

TEST(EmuRuleSets, FewerWaitStatesThanAmdsCodeFaultUnderBoth) {
  TestKernels k("rule_sets");
  for (RuleSet rules : {RuleSet::kStrict, RuleSet::kHardware}) {
    SCOPED_TRACE(::testing::Message() << rule_set_name(rules));
    expect_fault(run_one(k, "k_vcc_read_no_wait", rules),
                 {"vcc_lo read by a VALU 0 wait state(s)"});
  }
}

TEST(EmuRuleSets, PermlaneSwapAfterSwapOneWaitState) {
  TestKernels k("rule_sets");
  const auto hw = strict_faults_hardware_runs(
      k, "k_swap_after_swap_one_wait",
      "permlane swap reads v2 1 wait state(s) after the permlane swap that wrote it (needs 2)");
  ASSERT_TRUE(hw.result.ok);
  const auto full = run_one(k, "k_swap_after_swap_two_waits", RuleSet::kStrict);
  ASSERT_TRUE(full.result.ok) << full.result.error;
  EXPECT_EQ(hw.out, full.out);
  // Both operands were written by the first swap: one warning, one time.
  ASSERT_EQ(hw.result.warnings.size(), 1u);
  expect_warning(hw.result.warnings[0],
                 {"permlane-swap-after-swap", "v_permlane16_swap", 1, 2, 1, {"checkPermlaneHazards"}});

  // After an ordinary VALU write the rule is not relaxed.
  for (RuleSet rules : {RuleSet::kStrict, RuleSet::kHardware}) {
    SCOPED_TRACE(::testing::Message() << rule_set_name(rules));
    expect_fault(run_one(k, "k_swap_after_valu_one_wait", rules, 16),
                 {"reads v3 less than 2 wait states after a VALU wrote it"});
  }
}

// A load to LDS into bytes another wave reads in the same barrier interval: a race under
// strict; under hardware the emulation orders the read first (the load writes when its data
// return), the MI355X replay confirms that order with margin, and a warning names the rule.
// Every interleaving seed gives the same bytes.
TEST(EmuRuleSets, LoadToLdsAfterAnotherWavesReadIsOrderedByTiming) {
  TestKernels k("rule_sets");
  const uint32_t block[3] = {128, 1, 1}, grid[3] = {1, 1, 1};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(::testing::Message() << "interleaving seed " << seed);
    const auto strict = k.run3("k_dma_after_read", 128 * 16, lds_input(), {}, block, grid, seed, 1, RuleSet::kStrict);
    expect_fault(strict, {"LDS race"});
    const auto hw = k.run3("k_dma_after_read", 128 * 16, lds_input(), {}, block, grid, seed, 1, RuleSet::kHardware);
    ASSERT_TRUE(hw.result.ok) << hw.result.error;
    for (uint32_t t = 0; t < 128; ++t)
      EXPECT_EQ(hw.out[16 * t], t < 64 ? t + 64 : lds_input()[t - 64]) << "work-item " << t;
    bool named = false;
    for (const RuleWarning& w : hw.result.warnings) {
      if (w.rule != "lds-dma-order") continue;
      named = true;
      EXPECT_GE(w.slack_cycles, 0);
      EXPECT_NE(w.text.find("ordered only by timing"), std::string::npos) << w.text;
    }
    EXPECT_TRUE(named);
  }
}

// The relaxation covers loads to LDS only: two waves' DS accesses with no barrier between
// them race under the hardware rules too, and two loads to LDS into the same bytes issued
// together fault there because the replay finds their returns closer than the margin.
TEST(EmuRuleSets, TimingOrderNeedsALoadToLdsAndAMargin) {
  TestKernels lds("lds"), k("rule_sets");
  const uint32_t block[3] = {256, 1, 1}, two[3] = {128, 1, 1}, grid[3] = {1, 1, 1};
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(::testing::Message() << "interleaving seed " << seed);
    for (const char* kernel : {"k_lds_race_raw", "k_lds_race_waw", "k_lds_race_war"})
      expect_fault(lds.run3(kernel, 256 * 16, {}, {}, block, grid, seed, 1, RuleSet::kHardware), {"LDS race"});
    expect_fault(k.run3("k_dma_same_bytes", 128 * 16, lds_input(), {}, two, grid, seed, 1, RuleSet::kStrict),
                 {"LDS race"});
    expect_fault(k.run3("k_dma_same_bytes", 128 * 16, lds_input(), {}, two, grid, seed, 1, RuleSet::kHardware),
                 {"LDS order", "rule lds-dma-order"});
  }
}

// The default comes from ZYFA_EMU_RULES; an explicit option wins; a bad value is refused by name.
TEST(EmuRuleSets, EnvironmentVariable) {
  TestKernels k("rule_sets");
  const char* saved = std::getenv("ZYFA_EMU_RULES");
  const std::string old = saved ? saved : "";
  auto run = [&](RuleSet rules) {
    return run_one(k, "k_vcc_read_one_wait", rules).result;
  };
  unsetenv("ZYFA_EMU_RULES");
  EXPECT_FALSE(run(RuleSet::kDefault).ok);
  setenv("ZYFA_EMU_RULES", "hardware", 1);
  const DispatchResult hw = run(RuleSet::kDefault);
  EXPECT_TRUE(hw.ok) << hw.error;
  EXPECT_EQ(hw.rules, RuleSet::kHardware);
  EXPECT_FALSE(run(RuleSet::kStrict).ok);
  setenv("ZYFA_EMU_RULES", "lenient", 1);
  const DispatchResult bad = run(RuleSet::kDefault);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("ZYFA_EMU_RULES = 'lenient'"), std::string::npos) << bad.error;
  if (saved) setenv("ZYFA_EMU_RULES", old.c_str(), 1);
  else unsetenv("ZYFA_EMU_RULES");
}

TEST(EmuRuleSets, Names) {
  RuleSet r = RuleSet::kDefault;
  EXPECT_TRUE(parse_rule_set("strict", &r));
  EXPECT_EQ(r, RuleSet::kStrict);
  EXPECT_TRUE(parse_rule_set("hardware", &r));
  EXPECT_EQ(r, RuleSet::kHardware);
  EXPECT_FALSE(parse_rule_set("Hardware", &r));
  EXPECT_STREQ(rule_set_name(RuleSet::kHardware), "hardware");
  EXPECT_STREQ(rule_set_name(RuleSet::kStrict), "strict");
}

}  // namespace
}  // namespace zyfa::emu::test
