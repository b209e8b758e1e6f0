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
  expect_lanes(k.run("k_buffer_range", 64 * 16, ramp(80), {in_records, out_records}), [&](uint32_t lane, const uint32_t* o) {
    EXPECT_EQ(o[0], lane * 4 + 4 <= in_records ? 0x1000u + lane : 0u);
    EXPECT_EQ(o[1], lane * 4 + 4 <= in_records ? 0x1000u + lane : 0u);      // dwordx2, first dword
    EXPECT_EQ(o[2], lane * 4 + 8 <= in_records ? 0x1000u + lane + 1 : 0u);  // second dword on its own
    EXPECT_EQ(o[3], lane * 64 + 16 <= out_records ? 1000u + lane : 0xDEADBEEFu);
  });
}

TEST(EmuMemory, AccessOutsideTheCallsBuffersFaults) {
  TestKernels k("memory");
  expect_fault(k.run("k_global_outside", 16), {"outside every buffer", "global_store_dword", "lane 0"});
}

TEST(EmuMemory, StoreIntoReadOnlyBufferFaults) {
  TestKernels k("memory");
  expect_fault(k.run("k_global_readonly", 16), {"read-only"});
}


TEST(EmuMemory, GlobalLoadToLds) {
  TestKernels k("memory");
  std::vector<uint32_t> in(256);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = 0x5000u + i;
  expect_lanes(k.run("k_load_to_lds", 64 * 16, in), [&](uint32_t l, const uint32_t* o) {
    EXPECT_EQ(o[0], 0x5000u + l);          // dword form: LDS[M0 + 4l] = in[l]
    EXPECT_EQ(o[1], 0x5000u + 4 * l);      // x4 form: LDS[M0 + 16l ..] = in[4l ..]
    EXPECT_EQ(o[2], 0x5000u + 4 * l + 3);
  });
}

TEST(EmuMemory, LdsReadBeforeLoadToLdsCompletesFaults) {
  TestKernels k("memory");
  std::vector<uint32_t> in(256, 1);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    expect_fault(k.run("k_load_to_lds_nowait", 16, in, {}, 64, 1, seed), {"written by the load to LDS at pc"});
  }
}


TEST(EmuMemory, CacheMaintenanceRuns) {
  TestKernels k("memory");
  const auto r = k.run("k_cache_ops", 16);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.result.stats.instructions, 5u);
}

}  // namespace
}  // namespace zyfa::emu::test
