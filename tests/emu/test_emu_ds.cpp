// LDS and scalar-memory instruction forms on hand-worked values (AMD CDNA4 ISA, "Local Data
// Share Operations" incl. ds_swizzle modes, and "Scalar Memory Operations").
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuDs, Forms) {
  TestKernels k("ds");
  for (uint64_t seed : {1ull, 9ull}) {
    expect_lanes(k.run("k_ds", 64 * 16, {}, {}, 64, 1, seed), [&](uint32_t l, const uint32_t* o) {
      EXPECT_EQ(o[0], l + 100);                           // read2 offset0:64 (dwords) -> LDS[l + 64]
      EXPECT_EQ(o[1], l + 200);                           // offset1:128 -> LDS[l + 128]
      EXPECT_EQ(o[2], 4 * (l % 16));                      // b128 at 16 * (l % 16): dwords 4(l%16)..+3
      EXPECT_EQ(o[3], 4 * (l % 16) + 3);
      EXPECT_EQ(o[4], 64u);                               // 64 lanes each added 1
      EXPECT_EQ(o[5], 0xffffffffu);                       // i8 of 0xff
      EXPECT_EQ(o[6], 0x80u);                             // u8 of byte 1
      EXPECT_EQ(o[7], 0xffff80ffu);                       // i16 of 0x80ff
      EXPECT_EQ(o[8], l ^ 1);                             // bpermute from lane ^ 1
      EXPECT_EQ(o[9], (l & ~3u) | (3 - (l & 3)));         // quad permute 3,2,1,0
      EXPECT_EQ(o[10], l ^ 16);                           // swap 16 within 32-lane halves
    });
  }
}

TEST(EmuSmem, OffsetsAndBufferRange) {
  TestKernels k("smem");
  std::vector<uint32_t> in(16);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = 10 + i;
  const auto r = k.run("k_smem", 16, in);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.out[0], 11u);  // s_load_dwordx4 at byte 4: in[1]
  EXPECT_EQ(r.out[1], 14u);  // ... in[4]
  EXPECT_EQ(r.out[2], 12u);  // SGPR offset 8: in[2]
  EXPECT_EQ(r.out[3], 12u);  // s_buffer_load at byte 8, in range (8 + 4 <= 12)
  EXPECT_EQ(r.out[4], 0u);   // byte 12 is past num_records: 0
}

}  // namespace
}  // namespace zyfa::emu::test
