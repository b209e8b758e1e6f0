// MFMA dependency hazards: each case with exactly the documented number of wait states must
// run, and with one fewer must stop with a hazard diagnostic. gfx950 numbers from LLVM
// GCNHazardRecognizer.cpp: 4-pass XDL result read by VALU/VMEM/LDS or as SrcA 8, by an
// overlapping SrcC 6; 8-pass read 12; 16-pass read 20; VALU write then MFMA read 2; VALU write
// of an in-flight SrcC 3; VALU overwrite of a 4-pass result 8; same-SrcC chain 0. VMEM and LDS
// loads into an MFMA's registers (checkMAIVALUHazards: their definitions count as a VALU's):
// overwrite of a 4-pass result 8, of an 8-pass result 12; into a 4-pass SrcC 3, 8-pass SrcC 7.
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

struct Case {
  const char* ok;
  const char* short_by_one;
};

class Hazard : public ::testing::TestWithParam<Case> {};

TEST_P(Hazard, ExactWaitStatesRunOneFewerFaults) {
  TestKernels k("hazards");
  const Case c = GetParam();
  const auto ok = k.run(c.ok, 64 * 16);
  EXPECT_TRUE(ok.result.ok) << c.ok << ": " << ok.result.error;
  SCOPED_TRACE(c.short_by_one);
  expect_fault(k.run(c.short_by_one, 64 * 16), {"hazard"});
}

INSTANTIATE_TEST_SUITE_P(
    Mfma, Hazard,
    ::testing::Values(Case{"k_mfma4_read_ok", "k_mfma4_read_short"}, Case{"k_mfma8_read_ok", "k_mfma8_read_short"},
                      Case{"k_mfma_overlap_ok", "k_mfma_overlap_short"}, Case{"k_valu_mfma_ok", "k_valu_mfma_short"},
                      Case{"k_valu_war_ok", "k_valu_war_short"}, Case{"k_mfma_store_ok", "k_mfma_store_short"},
                      Case{"k_mfma_srca_ok", "k_mfma_srca_short"}, Case{"k_mfma_waw_ok", "k_mfma_waw_short"},
                      Case{"k_mfma_ds_ok", "k_mfma_ds_short"}, Case{"k_mfma_ds_agpr_ok", "k_mfma_ds_agpr_short"},
                      Case{"k_mfma16_read_ok", "k_mfma16_read_short"},
                      Case{"k_ds_load_waw_ok", "k_ds_load_waw_short"},
                      Case{"k_vmem_load_waw_ok", "k_vmem_load_waw_short"},
                      Case{"k_ds_load_war_ok", "k_ds_load_war_short"},
                      Case{"k_vmem_load_war_ok", "k_vmem_load_war_short"}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.ok).substr(2); });

TEST(EmuMfma, ResultsOfAllOnesAndChain) {
  TestKernels k("hazards");
  // All-ones bf16 operands: every output of a 16x16x32 product is 32, of 32x32x16 is 16.
  auto r = k.run("k_mfma4_read_ok", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (int lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], f2u(32.0f)) << lane;
  r = k.run("k_mfma8_read_ok", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (int lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], f2u(16.0f)) << lane;
  // e4m3 0x38 = 1.0, scales 2^(127-127) = 1: every output of the 32x32x64 product is 64.
  r = k.run("k_mfma16_read_ok", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (int lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], f2u(64.0f)) << lane;
  r = k.run("k_mfma_chain", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (int lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], f2u(64.0f)) << lane;
}

}  // namespace
}  // namespace zyfa::emu::test
