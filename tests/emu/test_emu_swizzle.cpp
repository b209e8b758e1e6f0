// Swizzled buffer resources: the ISA's swizzled address against hand-computed addresses, a
// kernel's loads, ADD_TID loads, loads to LDS and stores through swizzled resources against an
// independent implementation of the formula, and the accesses the ISA leaves undefined.
#include <random>

#include "emu/core/buffer_address.h"
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

// The ISA's swizzled buffer offset, written out again here (element size 4 on gfx9).
uint64_t swizzled(uint64_t index, uint64_t offset, uint64_t stride, uint64_t index_stride) {
  return (index / index_stride * stride + offset / 4 * 4) * index_stride + index % index_stride * 4 + offset % 4;
}

TEST(EmuSwizzle, AddressesComputedByHand) {
  const uint32_t words[4] = {0x1000, 0x80100000u, 150, 0x00020000};  // stride 16, swizzle, index stride 8
  const BufferResource r = decode_buffer_resource(words);
  EXPECT_TRUE(r.swizzle);
  EXPECT_EQ(r.stride, 16u);
  EXPECT_EQ(r.index_stride, 8u);
  EXPECT_EQ(r.base, 0x1000u);
  // index 9 = 1 * 8 + 1, offset 4 = 1 * 4 + 0: (1 * 16 + 1 * 4) * 8 + 1 * 4 + 0 = 164.
  EXPECT_EQ(buffer_element_offset(r, 9, 4), 164u);
  // index 7, offset 12: (0 + 12) * 8 + 28 = 124.
  EXPECT_EQ(buffer_element_offset(r, 7, 12), 124u);
  // index 17 = 2 * 8 + 1, offset 2 (a byte access): (32 + 0) * 8 + 4 + 2 = 262.
  EXPECT_EQ(buffer_element_offset(r, 17, 2), 262u);
  // INDEX_STRIDE 3 (64) with ADD_TID; DATA_FORMAT 2 is then stride bits [17:14].
  const uint32_t tid[4] = {0, 0x80100000u, 64, 0x00E00000u | (2u << 15)};
  const BufferResource t = decode_buffer_resource(tid);
  EXPECT_TRUE(t.add_tid);
  EXPECT_EQ(t.index_stride, 64u);
  EXPECT_EQ(t.stride, 16u | (2u << 14));
  // index 70 = 1 * 64 + 6, offset 8: (32784 + 8) * 64 + 24 = 2098712.
  EXPECT_EQ(buffer_element_offset(t, 70, 8), 2098712u);
  // Not swizzled: offset + stride * index.
  const uint32_t lin[4] = {0, 0x00100000u, 150, 0x00020000};
  EXPECT_EQ(buffer_element_offset(decode_buffer_resource(lin), 9, 4), 148u);
  // The private segment: lane 5's dword 2 is at (2 * 64 + 5) * 4 = 532; byte 3 of it at 535.
  EXPECT_EQ(scratch_lane_offset(5, 8), 532u);
  EXPECT_EQ(scratch_lane_offset(5, 11), 535u);
  EXPECT_EQ(scratch_lane_offset(63, 4), 508u);
}

TEST(EmuSwizzle, KernelLoadsStoresAndLoadsToLds) {
  TestKernels k("swizzle");
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> in(1024);
  for (auto& v : in) v = uint32_t(rng()) | 1u;  // never 0: an out-of-range load reads 0
  const uint32_t soffset = 8;
  const auto r = k.run("k_buffer_swizzle", 64 * 16 + 1024, in,
                       {0x80100000u, 0x00020000u, 150, soffset, 0x00E00000u, 300}, 64, 1, seed);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  std::vector<uint32_t> stored(1024, 0xDEADBEEFu);
  for (uint32_t l = 0; l < 64; ++l) {
    SCOPED_TRACE("lane " + std::to_string(l));
    const uint32_t off = 4 * (l % 3) + 4;
    const uint32_t idx = 3 * l;
    const uint32_t want = idx < 150 ? in[(soffset + swizzled(idx, off, 16, 8)) / 4] : 0u;
    EXPECT_EQ(r.out[l * 16 + 0], want);
    EXPECT_EQ(r.out[l * 16 + 2], want);  // the same load, to LDS
    const uint32_t tid_idx = idx + l;     // ADD_TID adds the lane to the index
    EXPECT_EQ(r.out[l * 16 + 1], tid_idx < 300 ? in[(soffset + swizzled(tid_idx, off, 16, 64)) / 4] : 0u);
    stored[swizzled(l, off, 16, 16) / 4] = 7777 + l;
  }
  for (uint32_t i = 0; i < 1024; ++i) EXPECT_EQ(r.out[64 * 16 + i], stored[i]) << "stored word " << i;
}

TEST(EmuSwizzle, UndefinedAccessesAreRefused) {
  TestKernels k("swizzle");
  const std::vector<uint32_t> args = {0x80100000u, 0x00020000u, 150, 0, 0x00E00000u, 300};
  expect_fault(k.run("k_buffer_swizzle_wide", 16, std::vector<uint32_t>(1024, 1), args),
               {"2-dword access through a swizzled buffer resource"});
  expect_fault(k.run("k_buffer_swizzle_unaligned", 16, std::vector<uint32_t>(1024, 1), args), {"dword aligned"});
}

}  // namespace
}  // namespace zyfa::emu::test
