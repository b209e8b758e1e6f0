// The private segment: the interleaved per-lane layout seen through scratch_* and through raw
// and swizzled (ADD_TID) buffer resources over FLAT_SCRATCH, the private segment size SGPR and
// statistics, and bounds.
#include <random>

#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuScratch, InterleavedLayoutAndPrivateBufferAccess) {
  TestKernels k("scratch");
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> in(64 * 16);
  for (auto& v : in) v = uint32_t(rng());
  const auto r = k.run("k_scratch_layout", 64 * 16, in, {}, 64, 2, seed);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t l = 0; l < 64; ++l) {
    SCOPED_TRACE("lane " + std::to_string(l));
    const uint32_t* o = &r.out[l * 16];
    const uint32_t* p = &in[l * 16];
    // Scratch byte (64 k + lane) * 4 holds the lane's private dword k.
    for (int kk = 0; kk <= 10; ++kk) EXPECT_EQ(o[kk], p[kk]) << "private dword " << kk;
    EXPECT_EQ(o[11], p[3]);   // swizzled ADD_TID resource, offset 12
    EXPECT_EQ(o[12], p[9]);   // offset 36
    EXPECT_EQ(o[13], p[10]);  // scratch_load v2 (32) + 8
    EXPECT_EQ(o[14], p[5]);   // scratch_load offset 20
    EXPECT_EQ(o[15], 64u);    // private segment size SGPR
  }
  EXPECT_EQ(r.result.stats.scratch_lane_bytes, 64u);
  EXPECT_EQ(r.result.stats.scratch_used_bytes, 44u);
}

TEST(EmuScratch, AccessBeyondThePrivateSegmentFaults) {
  TestKernels k("scratch");
  expect_fault(k.run("k_scratch_oob", 16), {"beyond the kernel's 16-byte private segment", "offset 0x10"});
}

TEST(EmuScratch, UnalignedDwordFaults) {
  TestKernels k("scratch");
  expect_fault(k.run("k_scratch_unaligned", 16), {"unaligned private offset 0x2"});
}

}  // namespace
}  // namespace zyfa::emu::test
