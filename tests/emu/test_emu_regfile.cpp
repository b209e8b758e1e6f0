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
  const auto r = k.run("k_high_vgprs", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.out[l * 16 + 0], 3 * l) << "lane " << l;
    EXPECT_EQ(r.out[l * 16 + 1], 3 * l + 7) << "lane " << l;
    EXPECT_EQ(r.out[l * 16 + 2], 6 * l + 7) << "lane " << l;
  }
}

TEST(EmuRegfile, VAndANamesOfOnePhysicalRegisterAlias) {
  TestKernels k("regfile");
  const auto r = k.run("k_alias", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.out[l * 16 + 0], l + 11) << "a36 is v100, lane " << l;
    EXPECT_EQ(r.out[l * 16 + 1], 2 * l + 11) << "v74 is a10, lane " << l;
  }
}

TEST(EmuRegfile, LoadInFlightSeenThroughTheOtherName) {
  TestKernels k("regfile");
  const auto r = k.run("k_alias_pending", 16);
  ASSERT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.find("read of a36 while the memory load"), std::string::npos) << r.result.error;
}

TEST(EmuRegfile, PastTheTotalFaults) {
  TestKernels k("regfile");
  const auto v = k.run("k_past_total", 16);
  ASSERT_FALSE(v.result.ok);
  EXPECT_NE(v.result.error.find("writes v128 beyond the 128 VGPRs"), std::string::npos) << v.result.error;
  const auto a = k.run("k_agpr_past_total", 16);
  ASSERT_FALSE(a.result.ok);
  EXPECT_NE(a.result.error.find("writes a64 beyond the 64 AGPRs"), std::string::npos) << a.result.error;
  const auto m = k.run("k_mfma_dst_past_agprs", 16);
  ASSERT_FALSE(m.result.ok);
  EXPECT_NE(m.result.error.find("a126..a129 beyond the 128 AGPRs"), std::string::npos) << m.result.error;
}

}  // namespace
}  // namespace zyfa::emu::test
