// Initial wave state from the kernel descriptor: user SGPRs in their documented order
// (dispatch pointer before kernarg pointer), workgroup ids x/y/z, packed work-item ids,
// dispatch packet sizes; a 3-D grid run on two threads gives the same bytes as on one.
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuDispatch, InitialStateOfEveryWorkItem) {
  TestKernels k("dispatch");
  const uint32_t block[3] = {8, 4, 2}, grid[3] = {2, 3, 2};
  const size_t items = 64 * 12;
  const auto r = k.run3("k_dispatch", items * 4, {}, {}, block, grid, 5);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t wz = 0; wz < 2; ++wz)
    for (uint32_t wy = 0; wy < 3; ++wy)
      for (uint32_t wx = 0; wx < 2; ++wx)
        for (uint32_t z = 0; z < 2; ++z)
          for (uint32_t y = 0; y < 4; ++y)
            for (uint32_t x = 0; x < 8; ++x) {
              const size_t idx = ((wz * 3 + wy) * 2 + wx) * 64 + (z * 4 + y) * 8 + x;
              const uint32_t* o = &r.out[idx * 4];
              ASSERT_EQ(o[0], wx | (wy << 8) | (wz << 16)) << idx;
              ASSERT_EQ(o[1], x | (y << 10) | (z << 20)) << idx;
              ASSERT_EQ(o[2], 8u | (4u << 16)) << idx;
              ASSERT_EQ(o[3], 16u) << idx;
            }
  const auto two = k.run3("k_dispatch", items * 4, {}, {}, block, grid, 5, 2);
  ASSERT_TRUE(two.result.ok) << two.result.error;
  EXPECT_EQ(r.out, two.out);
}


TEST(EmuDispatch, RefusesWhatItDoesNotModel) {
  TestKernels k("dispatch");
  expect_fault(k.run("k_scratch", 16), {"scratch"});
  expect_fault(k.run("no_such_kernel", 16), {"no_such_kernel"});
}

TEST(EmuLoader, RejectsOtherTargetsAndDamage) {
  std::vector<uint8_t> bytes = read_binary(std::string(ZYFA_EMU_TEST_KERNEL_DIR) + "/dispatch.co");
  ASSERT_GT(bytes.size(), 64u);
  std::vector<uint8_t> gfx942 = bytes;
  gfx942[48] = 0x4C;  // e_flags machine: gfx942
  try {
    LoadedCodeObject obj(gfx942.data(), gfx942.size());
    ADD_FAILURE() << "a gfx942 object loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("gfx950"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + 200);
  EXPECT_THROW(LoadedCodeObject(truncated.data(), truncated.size()), std::exception);
  const LoadedCodeObject ok(bytes.data(), bytes.size());
  const KernelInfo* k = ok.find_kernel("k_dispatch");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->kd.user_dispatch_ptr());
  EXPECT_TRUE(k->kd.user_kernarg_segment_ptr());
  EXPECT_EQ(k->kd.user_sgpr_count(), 4u);
  EXPECT_EQ(k->kd.enable_vgpr_workitem_id(), 2u);
  EXPECT_EQ(k->kd.accum_offset(), 16u);
  EXPECT_EQ(k->kd.kernarg_size, 16u);
}


// Only the explicit argument (8 bytes) is given: the emulator appends the hidden block counts
// and group sizes that the metadata lists, as the HIP runtime would.
TEST(EmuDispatch, HiddenArgumentsFromMetadata) {
  TestKernels k("hidden");
  std::vector<uint32_t> out(4, 0xDEADBEEFu);
  const uint64_t out_ptr = reinterpret_cast<uint64_t>(out.data());
  Dispatch d;
  d.object = &k.object();
  d.kernel = "k_hidden";
  d.grid[0] = 3;
  d.grid[1] = 2;
  d.block[0] = 64;
  d.kernarg = &out_ptr;
  d.kernarg_size = 8;
  d.regions.push_back({out_ptr, out.size() * 4, true, "out"});
  DispatchOptions opt;
  const DispatchResult r = run_dispatch(d, opt);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(out[0], 3u);
  EXPECT_EQ(out[1], 2u);
  EXPECT_EQ(out[2], 64u | (1u << 16));
}

}  // namespace
}  // namespace zyfa::emu::test
