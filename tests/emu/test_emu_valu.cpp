// Vector ALU family: per-lane results, carries through VCC, VOPC masks, DPP, SDWA, EXEC
// masking (AMD CDNA4 ISA VOP1/VOP2/VOP3/VOPC pseudocode, DPP and SDWA sections).
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

TEST(EmuValu, HandWorkedCases) {
  TestKernels k("valu");
  expect_lanes(k.run("k_valu", 64 * 16), [&](uint32_t lane, const uint32_t* o) {
    EXPECT_EQ(o[0], lane - 1);                         // 0xffffffff + lane (mod 2^32)
    EXPECT_EQ(o[1], lane >= 1 ? 1u : 0u);              // carry out
    EXPECT_EQ(o[2], lane >= 1 ? 1u : 0u);              // 0 + 0 + carry in
    EXPECT_EQ(o[3], lane < 10 ? 1u : 0u);
    EXPECT_EQ(o[4], f2u(3.25f));
    EXPECT_EQ(o[5], 0x00004488u);                      // bytes: b0=0x88, a0=0x44, sign(a)=0, 0
    EXPECT_EQ(o[6], f2u(2.0f));
    EXPECT_EQ(o[7], f2u(8.0f));
    EXPECT_EQ(o[8], lane % 16 == 0 ? 0xdeadu : lane - 1);
    EXPECT_EQ(o[9], 0x00ac5555u);
    EXPECT_EQ(o[10], 0x00000002u);
    EXPECT_EQ(o[11], 0xfffffffeu);
    EXPECT_EQ(o[12], lane);
    EXPECT_EQ(o[13], 5u);
    EXPECT_EQ(o[14], f2u(-4.0f));
    EXPECT_EQ(o[15], 4u);                              // trunc(2.5) + rndne(2.5) = 2 + 2
  });
}

// Bit i of the result is bit (a_i << 2 | b_i << 1 | c_i) of the 8-bit table (ISA BITOP3).
TEST(EmuValu, Bitop3TruthTables) {
  TestKernels k("valu");
  const auto r = k.run("k_valu_bitop3", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  const uint32_t tables[4] = {0x78, 0x36, 0x96, 0xe8};
  for (uint32_t lane = 0; lane < 64; ++lane) {
    const uint32_t a = 0x80000001u ^ (lane << 8), b = lane, c = 0xf0f0000fu;
    for (int t = 0; t < 4; ++t) {
      uint32_t want = 0;
      for (int i = 0; i < 32; ++i) {
        const uint32_t idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        want |= ((tables[t] >> idx) & 1) << i;
      }
      EXPECT_EQ(r.out[lane * 16 + t], want) << "lane " << lane << " table 0x" << std::hex << tables[t];
    }
  }
}

TEST(EmuValu, ExecMasksLanes) {
  TestKernels k("valu");
  expect_lanes(k.run("k_valu_exec", 64 * 16), [&](uint32_t lane, const uint32_t* o) {
    EXPECT_EQ(o[0], lane % 2 == 0 ? 100 + lane : 0xDEADBEEFu);
  });
}


// gfx940+ hazards without interlocks (GCNHazardRecognizer checkVALUHazards): a VALU reading
// an SGPR/VCC a VALU wrote needs 2 wait states; a VALU overwriting the data of a > 64-bit
// VMEM store needs 2. Exactly enough runs, one fewer stops the kernel.
TEST(EmuValu, VccReadAfterValuWrite) {
  TestKernels k("valu");
  const auto ok = k.run("k_vcc_read_ok", 64 * 16);
  EXPECT_TRUE(ok.result.ok) << ok.result.error;
  expect_fault(k.run("k_vcc_read_short", 64 * 16), {"vcc_lo read by a VALU"});
}

TEST(EmuValu, WideStoreDataOverwrite) {
  TestKernels k("valu");
  const auto ok = k.run("k_store_data_ok", 64 * 16);
  ASSERT_TRUE(ok.result.ok) << ok.result.error;
  for (uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(ok.out[lane * 16 + 1], 2u) << lane;  // data read at issue
  expect_fault(k.run("k_store_data_short", 64 * 16), {"store-data hazard"});
}


TEST(EmuValu, ConversionOperandSelects) {
  TestKernels k("valu");
  expect_lanes(k.run("k_cvt", 64 * 16), [&](uint32_t, const uint32_t* o) {
    EXPECT_EQ(o[0], 0xc0385678u);  // e4m3(1.0) = 0x38, e4m3(-2.0) = 0xc0 into the high word
    EXPECT_EQ(o[1], f2u(-2.0f));   // byte 3 back to f32
    EXPECT_EQ(o[2], 0x40003f80u);  // bf16(2.0) : bf16(1.0)
    EXPECT_EQ(o[3], f2u(8.0f));    // 2 * 4
    EXPECT_EQ(o[4], f2u(15.0f));   // 3 * 5
    EXPECT_EQ(o[5], f2u(12.0f));   // op_sel: low = src0.hi * src1.lo = 3 * 4
    EXPECT_EQ(o[6], f2u(10.0f));   // op_sel_hi: high = src0.lo * src1.hi = 2 * 5
    EXPECT_EQ(o[7], 0x34cc3c00u);  // f16(1.0) : f16(0.3) toward zero (0x34cc; nearest would be 0x34cd)
  });
}


// MODE.FP16_OVFL comes from the kernel descriptor: without it an out-of-range FP8 conversion
// gives NaN (0x7f), with it the largest finite value (448 = 0x7e).
TEST(EmuValu, Fp16OverflowModeFromDescriptor) {
  TestKernels k("valu");
  const auto nan = k.run("k_fp8_overflow_nan", 64 * 16);
  ASSERT_TRUE(nan.result.ok) << nan.result.error;
  EXPECT_EQ(nan.out[0] & 0xFFFF, 0x7f7fu);
  const auto sat = k.run("k_fp8_overflow_sat", 64 * 16);
  ASSERT_TRUE(sat.result.ok) << sat.result.error;
  EXPECT_EQ(sat.out[0] & 0xFFFF, 0x7e7eu);
}

}  // namespace
}  // namespace zyfa::emu::test
