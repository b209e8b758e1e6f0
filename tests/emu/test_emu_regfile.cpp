// The unified vector register file (gfx90a and later): one physical file per wave, v[i] at
// physical i, a[j] at physical accum_offset + j (LLVM AMDGPUUsage, compute_pgm_rsrc3
// ACCUM_OFFSET; CDNA4 ISA "Vector GPRs"). Expected values come from the lane id.
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuRegfile, VgprsUpToTheTotalAllocation) {
  TestKernels k("regfile");
  const KernelInfo* info = k.object().find_kernel("k_high_vgprs");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->kd.accum_offset(), 160u);
  EXPECT_EQ(info->kd.vgpr_count(), 256u);
  expect_lanes(k.run("k_high_vgprs", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    EXPECT_EQ(o[0], 3 * l);
    EXPECT_EQ(o[1], 3 * l + 7);
    EXPECT_EQ(o[2], 6 * l + 7);
  });
}

TEST(EmuRegfile, VAndANamesOfOnePhysicalRegisterAlias) {
  TestKernels k("regfile");
  expect_lanes(k.run("k_alias", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    EXPECT_EQ(o[0], l + 11) << "a36 is v100, lane ";
    EXPECT_EQ(o[1], 2 * l + 11) << "v74 is a10, lane ";
  });
}

TEST(EmuRegfile, LoadInFlightSeenThroughTheOtherName) {
  TestKernels k("regfile");
  expect_fault(k.run("k_alias_pending", 16), {"read of a36 while the memory load"});
}

TEST(EmuRegfile, PastTheTotalFaults) {
  TestKernels k("regfile");
  expect_fault(k.run("k_past_total", 16), {"writes v128 beyond the 128 VGPRs"});
  expect_fault(k.run("k_agpr_past_total", 16), {"writes a64 beyond the 64 AGPRs"});
  expect_fault(k.run("k_mfma_dst_past_agprs", 16), {"a126..a129 beyond the 128 AGPRs"});
}

}  // namespace
}  // namespace zyfa::emu::test
