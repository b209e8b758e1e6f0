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

}  // namespace
}  // namespace zyfa::emu::test
