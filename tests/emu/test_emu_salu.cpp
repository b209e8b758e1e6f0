// Scalar ALU family: values and SCC of hand-worked cases (AMD CDNA4 ISA, SOP1/SOP2/SOPK/SOPC
// pseudocode; the expected values are worked out in the comments).
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuSalu, HandWorkedCases) {
  TestKernels k("salu");
  const auto r = k.run("k_salu", 32);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  const uint32_t expect[] = {
      1, 1,                    // 0xffffffff + 2 = 1, carry out
      0xffffffffu, 1,          // 1 - 2 wraps, borrow
      0x80000000u, 1,          // 0x7fffffff + 1 overflows (signed)
      12,                      // 5 + 6 + SCC(1)
      0x23,                    // (0xabcd1234 >> 4) & 0xff
      0xffffffffu,             // bits [7:4] of 0xf0 = 0xf, sign-extended from 4 bits
      2, 1,                    // 0x0000000080000001 << 1 = 0x0000000100000002
      20, 11, 24,              // ff1(1<<20), flbit(1<<20) from the MSB, popcount(0xfffff0f0): movk sign-extends
      2,                       // (0x80000000 * 4) >> 32
      0xfffffffbu, 1,          // min(-5, 3) = -5, SCC = (-5 < 3)
      7,                       // -1 < 0 selects 7
      0xf0,                    // 0xff & ~0x0f
      17,                      // (3 << 2) + 5
      0xabcd1234u,             // low half of 0x1234, high half of 0xabcd0000
      10,                      // loop count
      0xfffffff0u, 1,          // s_movk_i32 sign-extends; s_cmpk_eq_i32 compares sign-extended
      1,                       // old EXEC returned by s_and_saveexec_b64
      7,                       // |-7|
      1,                       // 64-bit equality
  };
  for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); ++i)
    EXPECT_EQ(r.out[i], expect[i]) << "result " << i;
}

}  // namespace
}  // namespace zyfa::emu::test
