// Rule sets: under `strict` (the default) LLVM's conservative wait-state rules stop the kernel;
// under `hardware` a kernel that gives as few wait states as AMD's shipped gfx950 code runs,
// gives the same results as with the full count, and gets one warning per instruction naming
// the rule, the count given and the count LLVM asks for. Fewer still faults under both.
#include <cstdlib>
#include <string>

#include "emu/emulator.h"
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

const uint32_t kBlock[3] = {64, 1, 1};

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
  for (const RuleWarning& w : hw.result.warnings) {
    EXPECT_EQ(w.rule, "m0-lds-dma");
    EXPECT_EQ(w.given, 0);
    EXPECT_EQ(w.required, 1);
    EXPECT_EQ(w.count, 3u);
    EXPECT_NE(w.instruction.find("global_load_lds"), std::string::npos) << w.instruction;
    EXPECT_NE(w.text.find("m0-lds-dma"), std::string::npos) << w.text;
    EXPECT_NE(w.text.find("0 wait state(s) given, LLVM asks for 1"), std::string::npos) << w.text;
    EXPECT_NE(w.text.find("checkReadM0Hazards"), std::string::npos) << w.text;
  }
  EXPECT_LT(hw.result.warnings[0].pc, hw.result.warnings[1].pc);
}

TEST(EmuRuleSets, ValuSgprReadOneWaitState) {
  TestKernels k("rule_sets");
  const uint32_t grid[3] = {1, 1, 1};
  const auto strict = k.run3("k_vcc_read_one_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, RuleSet::kStrict);
  ASSERT_FALSE(strict.result.ok);
  EXPECT_NE(strict.result.error.find("vcc_lo read by a VALU 1 wait state(s) after a VALU wrote it (needs 2)"),
            std::string::npos) << strict.result.error;

  const auto hw = k.run3("k_vcc_read_one_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, RuleSet::kHardware);
  ASSERT_TRUE(hw.result.ok) << hw.result.error;
  for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(hw.out[l * 16], l < 10 ? 1u : 0u) << "lane " << l;
  ASSERT_EQ(hw.result.warnings.size(), 1u);
  const RuleWarning& w = hw.result.warnings[0];
  EXPECT_EQ(w.rule, "valu-sgpr-valu-read");
  EXPECT_NE(w.instruction.find("v_cndmask_b32"), std::string::npos) << w.instruction;
  EXPECT_EQ(w.given, 1);
  EXPECT_EQ(w.required, 2);
  EXPECT_EQ(w.count, 1u);  // VCC is two SGPRs read by one instruction: one warning
  EXPECT_NE(w.text.find("1 wait state(s) given, LLVM asks for 2"), std::string::npos) << w.text;
}

TEST(EmuRuleSets, FewerWaitStatesThanAmdsCodeFaultUnderBoth) {
  TestKernels k("rule_sets");
  const uint32_t grid[3] = {1, 1, 1};
  for (RuleSet rules : {RuleSet::kStrict, RuleSet::kHardware}) {
    const auto r = k.run3("k_vcc_read_no_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, rules);
    ASSERT_FALSE(r.result.ok) << rule_set_name(rules);
    EXPECT_NE(r.result.error.find("vcc_lo read by a VALU 0 wait state(s)"), std::string::npos) << r.result.error;
  }
}

TEST(EmuRuleSets, PermlaneSwapAfterSwapOneWaitState) {
  TestKernels k("rule_sets");
  const uint32_t grid[3] = {1, 1, 1};
  const auto strict = k.run3("k_swap_after_swap_one_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, RuleSet::kStrict);
  ASSERT_FALSE(strict.result.ok);
  EXPECT_NE(strict.result.error.find("permlane swap reads v2 1 wait state(s) after the permlane swap that wrote it "
                                    "(needs 2)"),
            std::string::npos) << strict.result.error;

  const auto hw = k.run3("k_swap_after_swap_one_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, RuleSet::kHardware);
  ASSERT_TRUE(hw.result.ok) << hw.result.error;
  const auto full = k.run3("k_swap_after_swap_two_waits", 64 * 16, {}, {}, kBlock, grid, 1, 1, RuleSet::kStrict);
  ASSERT_TRUE(full.result.ok) << full.result.error;
  EXPECT_EQ(hw.out, full.out);
  // Both operands were written by the first swap: one warning, one time.
  ASSERT_EQ(hw.result.warnings.size(), 1u);
  const RuleWarning& w = hw.result.warnings[0];
  EXPECT_EQ(w.rule, "permlane-swap-after-swap");
  EXPECT_NE(w.instruction.find("v_permlane16_swap"), std::string::npos) << w.instruction;
  EXPECT_EQ(w.given, 1);
  EXPECT_EQ(w.required, 2);
  EXPECT_EQ(w.count, 1u);
  EXPECT_NE(w.text.find("checkPermlaneHazards"), std::string::npos) << w.text;

  // After an ordinary VALU write the rule is not relaxed.
  for (RuleSet rules : {RuleSet::kStrict, RuleSet::kHardware}) {
    const auto r = k.run3("k_swap_after_valu_one_wait", 16, {}, {}, kBlock, grid, 1, 1, rules);
    ASSERT_FALSE(r.result.ok) << rule_set_name(rules);
    EXPECT_NE(r.result.error.find("reads v3 less than 2 wait states after a VALU wrote it"), std::string::npos)
        << r.result.error;
  }
}

// The default comes from ZYFA_EMU_RULES; an explicit option wins; a bad value is refused by name.
TEST(EmuRuleSets, EnvironmentVariable) {
  TestKernels k("rule_sets");
  const uint32_t grid[3] = {1, 1, 1};
  const char* saved = std::getenv("ZYFA_EMU_RULES");
  const std::string old = saved ? saved : "";
  auto run = [&](RuleSet rules) {
    return k.run3("k_vcc_read_one_wait", 64 * 16, {}, {}, kBlock, grid, 1, 1, rules).result;
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
