// Vector memory family: buffer range checking (per dword against num_records, loads of
// out-of-range dwords return 0, stores are dropped) and the emulator's own bounds: any access
// outside the buffers of the call, or a store into a read-only one, stops the kernel.
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

std::vector<uint32_t> ramp(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0x1000u + uint32_t(i);
  return v;
}

TEST(EmuMemory, BufferRangeCheckPerDword) {
  TestKernels k("memory");
  const uint32_t in_records = 40;              // bytes: dwords 0..9 of `in` are in range
  const uint32_t out_records = 64 * 20 + 16;   // word 3 of rows 0..20 is in range (row*64+12+4 <= nr)
  const auto r = k.run("k_buffer_range", 64 * 16, ramp(80), {in_records, out_records});
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t lane = 0; lane < 64; ++lane) {
    const uint32_t* o = &r.out[lane * 16];
    SCOPED_TRACE("lane " + std::to_string(lane));
    EXPECT_EQ(o[0], lane * 4 + 4 <= in_records ? 0x1000u + lane : 0u);
    EXPECT_EQ(o[1], lane * 4 + 4 <= in_records ? 0x1000u + lane : 0u);      // dwordx2, first dword
    EXPECT_EQ(o[2], lane * 4 + 8 <= in_records ? 0x1000u + lane + 1 : 0u);  // second dword on its own
    EXPECT_EQ(o[3], lane * 64 + 16 <= out_records ? 1000u + lane : 0xDEADBEEFu);
  }
}

TEST(EmuMemory, AccessOutsideTheCallsBuffersFaults) {
  TestKernels k("memory");
  const auto r = k.run("k_global_outside", 16);
  ASSERT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.find("outside every buffer"), std::string::npos) << r.result.error;
  EXPECT_NE(r.result.error.find("global_store_dword"), std::string::npos) << r.result.error;
  EXPECT_NE(r.result.error.find("lane 0"), std::string::npos) << r.result.error;
}

TEST(EmuMemory, StoreIntoReadOnlyBufferFaults) {
  TestKernels k("memory");
  const auto r = k.run("k_global_readonly", 16);
  ASSERT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.find("read-only"), std::string::npos) << r.result.error;
}

}  // namespace
}  // namespace zyfa::emu::test

namespace zyfa::emu::test {
namespace {

TEST(EmuMemory, GlobalLoadToLds) {
  TestKernels k("memory");
  std::vector<uint32_t> in(256);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = 0x5000u + i;
  const auto r = k.run("k_load_to_lds", 64 * 16, in);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.out[l * 16 + 0], 0x5000u + l) << l;          // dword form: LDS[M0 + 4l] = in[l]
    EXPECT_EQ(r.out[l * 16 + 1], 0x5000u + 4 * l) << l;      // x4 form: LDS[M0 + 16l ..] = in[4l ..]
    EXPECT_EQ(r.out[l * 16 + 2], 0x5000u + 4 * l + 3) << l;
  }
}

TEST(EmuMemory, LdsReadBeforeLoadToLdsCompletesFaults) {
  TestKernels k("memory");
  std::vector<uint32_t> in(256, 1);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto r = k.run("k_load_to_lds_nowait", 16, in, {}, 64, 1, seed);
    ASSERT_FALSE(r.result.ok) << "seed " << seed;
    EXPECT_NE(r.result.error.find("written by the load to LDS at pc"), std::string::npos) << r.result.error;
  }
}

}  // namespace
}  // namespace zyfa::emu::test

namespace zyfa::emu::test {
namespace {

TEST(EmuMemory, CacheMaintenanceRuns) {
  TestKernels k("memory");
  const auto r = k.run("k_cache_ops", 16);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.result.stats.instructions, 5u);
}

}  // namespace
}  // namespace zyfa::emu::test
