// Instruction semantics where the CDNA4 pseudocode (tinygrad cdna/str_pcode.py, extracted
// from the ISA guide) differs from a natural C++ reading, and the hazards LLVM's
// GCNHazardRecognizer lists for s_setreg/s_getreg and v_div_fmas. Each expected value is
// worked by hand from the pseudocode quoted next to it.
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

constexpr uint32_t kQuietedNan = 0x7fc00001u;  // the signaling NaN 0x7f800001 quieted

// The cases both IEEE modes share, then o[2..5] = V_MAX_F32, V_MIN_F32, V_MAX3_F32 and
// V_MED3_F32 with a signaling NaN operand, as `minmax` gives them for the kernel's mode.
void check_ieee_mode(const char* kernel, const uint32_t (&minmax)[4]) {
  TestKernels k("pseudocode");
  expect_lanes(k.run(kernel, 64 * 16), [&](uint32_t, const uint32_t* o) {
    EXPECT_EQ(o[0], 0x80010000u);  // UNUSED_SEXT, WORD_1: nothing above bit 31, bits 15:0 zero
    EXPECT_EQ(o[1], 0xffff8000u);  // UNUSED_SEXT, BYTE_1: bits 31:16 copy bit 15, bits 7:0 zero
    // { D1, D0 } = 65-bit S0 * S1 + S2: -1 * 1 + 0 = -1 (all 65 bits set)
    EXPECT_EQ(o[6], 0xffffffffu);
    EXPECT_EQ(o[7], 1u);
    // 2 * 3 + (2^63 - 1) = 2^63 + 5: D0 = 0x8000000000000005, bit 64 clear
    EXPECT_EQ(o[8], 0x80000000u);
    EXPECT_EQ(o[9], 0u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(o[2 + i], minmax[i]) << "word " << 2 + i;
  });
}

TEST(EmuPseudocode, IeeeModeOn) {
  // V_MAX_F32/V_MIN_F32 with MODE.IEEE: a signaling NaN operand gives it quieted.
  // V_MAX3_F32 = max(max(2.0, sNaN), 1.0) = max(qNaN, 1.0) = 1.0
  // V_MED3_F32 with a NaN operand = min3(sNaN, 2.0, 1.0) = min(qNaN, 1.0) = 1.0
  check_ieee_mode("k_pseudocode_ieee", {kQuietedNan, kQuietedNan, f2u(1.0f), f2u(1.0f)});
}

TEST(EmuPseudocode, IeeeModeOff) {
  // Without MODE.IEEE every NaN operand gives the other operand:
  // max(max(2.0, sNaN), 1.0) = max(2.0, 1.0); min(min(sNaN, 2.0), 1.0) = min(2.0, 1.0).
  check_ieee_mode("k_pseudocode_noieee", {f2u(1.0f), f2u(1.0f), f2u(2.0f), f2u(1.0f)});
}

TEST(EmuPseudocode, DsMinMaxF32KeepNanInMemory) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_ds_minmax_nan", 64 * 16), [&](uint32_t, const uint32_t* o) {
    // MEM = DATA < MEM ? DATA : MEM: 2.0 < NaN is false, the NaN stays (likewise for max).
    EXPECT_EQ(o[0], 0x7fc00000u);
    EXPECT_EQ(o[1], 0x7fc00000u);
  });
}

// Forms whose hardware behaviour is not documented (or not modelled) stop the kernel with a
// message instead of computing something: a packed-f32 inline constant, an MFMA under a
// partial EXEC, an int -> float conversion under another round mode, and an FP8 byte select
// through the VOP3 op_sel bits (undocumented bit order on gfx950).
TEST(EmuPseudocode, UnmodelledFormsAreRefused) {
  TestKernels k("pseudocode");
  const std::pair<const char*, const char*> cases[] = {
      {"k_pk_f32_inline_constant", "v_pk_mul_f32 with an inline constant or literal source is not modelled"},
      {"k_mfma_partial_exec", "v_mfma_f32_32x32x16_bf16 with a partial EXEC (0x00000000ffffffff)"},
      {"k_cvt_f32_i32_round_mode", "MODE round mode 0x3 is not modelled"},
      {"k_cvt_f32_fp8_vop3_opsel", "v_cvt_f32_fp8_e64 with a VOP3 op_sel byte select is not modelled"},
  };
  for (const auto& [kernel, message] : cases) {
    SCOPED_TRACE(kernel);
    expect_fault(k.run(kernel, 16), {message});
  }
}

TEST(EmuPseudocode, PermlaneSwaps) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_permlane_swap", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    // permlane32: VDST lanes 32..63 <-> SRC0 lanes 0..31 (v1 = lane, v2 = lane + 100)
    EXPECT_EQ(o[0], l < 32 ? l : l - 32 + 100);
    EXPECT_EQ(o[1], l < 32 ? l + 32 : l + 100);
    // permlane16: VDST rows 1 and 3 <-> SRC0 rows 0 and 2 (v3 = lane, v4 = lane + 100)
    const bool odd_row = (l / 16) % 2 == 1;
    EXPECT_EQ(o[2], odd_row ? l - 16 + 100 : l);
    EXPECT_EQ(o[3], odd_row ? l + 100 : l + 16);
  });
  // EXEC (low 32 lanes only) is not applied: the pseudocode never reads it and rocjitsu
  // ignores it, so the inactive upper lanes of vdst are swapped as well.
  expect_lanes(k.run("k_permlane_swap_partial_exec", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    EXPECT_EQ(o[0], l < 32 ? l : l - 32 + 100);
    EXPECT_EQ(o[1], l < 32 ? l + 32 : l + 100);
  });
}

TEST(EmuPseudocode, DivFmasWaitsForVcc) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_div_fmas_ok", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    EXPECT_EQ(o[0], f2u(l < 32 ? 3.25f * 4294967296.0f : 3.25f));
  });
  expect_fault(k.run("k_div_fmas_short", 64 * 16),
               {"v_div_fmas_f32 reads VCC 3 wait state(s) after a VALU wrote it; it requires 4"});
}

TEST(EmuPseudocode, SetregThenGetregWaits) {
  TestKernels k("pseudocode");
  const auto ok = k.run("k_setreg_getreg_ok", 16);
  ASSERT_TRUE(ok.result.ok) << ok.result.error;
  EXPECT_EQ(ok.out[0], 0xfu);  // MODE[7:4] (denormal controls) read back
  expect_fault(k.run("k_setreg_getreg_short", 16),
               {"s_getreg_b32 of HW_REG_MODE 1 wait state(s) after an s_setreg of it; it requires 2"});
  expect_fault(k.run("k_setreg_setreg_short", 16),
               {"s_setreg_imm32_b32 of HW_REG_MODE 1 wait state(s) after an s_setreg"});
}

TEST(EmuPseudocode, ScalarMaxSccAndAbsdiff) {
  TestKernels k("pseudocode");
  const auto r = k.run("k_salu_pseudocode", 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.out[0], 1u);  // S_MAX_U32: SCC = S0 >= S1, so equal operands set it
  EXPECT_EQ(r.out[1], 1u);  // S_MAX_I32 likewise
  EXPECT_EQ(r.out[2], 0u);  // S_MIN_U32: SCC = S0 < S1, clear for equal operands
  EXPECT_EQ(r.out[3], 1u);  // INT_MAX - INT_MIN wraps to -1 in 32 bits: |-1| = 1
}

TEST(EmuPseudocode, OmodOnlyWithoutIeeeAndOutputDenormals) {
  TestKernels k("pseudocode");
  for (const char* kernel : {"k_omod_ieee", "k_omod_denorm_out"}) {
    const auto r = k.run(kernel, 64 * 16);
    ASSERT_FALSE(r.result.ok) << kernel;
    EXPECT_NE(r.result.error.find("output modifier omod on v_mul_f32_e64 has no effect"), std::string::npos)
        << r.result.error;
  }
  const auto r = k.run("k_omod_applied", 64 * 16);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(r.out[l * 16], f2u(6.0f)) << "lane " << l;  // 1.5 * 2 * 2
}

TEST(EmuPseudocode, ClampAppliedOrRefused) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_clamp_modelled", 64 * 16), [&](uint32_t, const uint32_t* o) {
    EXPECT_EQ(o[0], f2u(1.0f));  // 2 + 1 clamped to [0, 1]
    EXPECT_EQ(o[1], 0xffffffffu);  // 0xffffffff + 2 saturates
  });
  for (const auto& [kernel, name] : {std::pair{"k_clamp_cvt_pk_bf16", "v_cvt_pk_bf16_f32"},
                                     std::pair{"k_clamp_cvt_f32_fp8", "v_cvt_f32_fp8_e64"},
                                     std::pair{"k_clamp_add_co", "v_add_co_u32_e64"}}) {
    const auto bad = k.run(kernel, 16);
    ASSERT_FALSE(bad.result.ok) << kernel;
    EXPECT_NE(bad.result.error.find(std::string("clamp on ") + name + " is not modelled"), std::string::npos)
        << bad.result.error;
  }
}

// DPP (CDNA4 ISA "DPP"; LLVM AMDGPUModifierSyntax): quad_perm picks within 4 lanes, row
// shifts/rotates stay within 16-lane rows, a lane whose source is outside the row (or the
// wave) is not written unless bound_ctrl asks for 0, bank_mask/row_mask disable the writes of
// 4-lane banks / 16-lane rows, row_bcast:15 feeds lane 15 of each row into the next row.
TEST(EmuPseudocode, DppAndSdwaSourceForms) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_dpp_sdwa_forms", 64 * 16), [&](uint32_t l, const uint32_t* o) {
    const uint32_t row = l & ~15u, in_row = l & 15u, old = 1000 + l;
    EXPECT_EQ(o[0], (l & ~3u) | (3 - (l & 3)));                 // quad_perm:[3,2,1,0]
    EXPECT_EQ(o[1], row | ((in_row - 4) & 15));                  // row_ror:4
    EXPECT_EQ(o[2], in_row == 15 ? 0u : l + 1);                  // row_shl:1, bound_ctrl: 0 fill
    const bool bank_on = ((in_row / 4) % 2) == 0;                // bank_mask 0x5: banks 0 and 2
    EXPECT_EQ(o[3], !bank_on || in_row == 0 ? old : l - 1);      // row_shr:1, no bound_ctrl
    const bool row_on = (l / 16) % 2 == 1;                       // row_mask 0xa: rows 1 and 3
    EXPECT_EQ(o[4], row_on ? row - 1 : old);                     // row_bcast:15
    EXPECT_EQ(o[5], l == 0 ? old : l - 1);                       // wave_shr:1
    EXPECT_EQ(o[6], 4u);                                         // sext(0xff) + 5 = -1 + 5
  });
}

// V_CVT_U32_F32 / V_CVT_I32_F32 implement LLVM's fp_to_uint / fp_to_sint (truncation); the
// hardware saturates out-of-range values and gives 0 for NaN.
TEST(EmuPseudocode, FloatToIntTruncatesAndSaturates) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_cvt_float_to_int", 64 * 16), [&](uint32_t, const uint32_t* o) {
    EXPECT_EQ(o[0], 2u);            // 2.75 -> 2
    EXPECT_EQ(o[1], 0u);            // -1.5 -> 0 (unsigned)
    EXPECT_EQ(o[2], 0xffffffffu);   // 5e9 -> UINT32_MAX
    EXPECT_EQ(o[3], 0u);            // NaN -> 0
    EXPECT_EQ(o[4], 0xfffffffeu);   // -2.75 -> -2
    EXPECT_EQ(o[5], 0x80000000u);   // -8.6e9 -> INT32_MIN
    EXPECT_EQ(o[6], 0u);            // just below 1 -> 0
  });
}

// Inline constant 248 = 1/(2*pi): f32 0x3e22f983, f64 0x3fc45f306dc9c882, f16 0x3118 (LLVM
// AMDGPU operand encoding). A packed 16-bit operation sees an inline constant in the low half
// only; the high half reads 0 on gfx9 and gfx10 (measured on hardware, LLVM issue 94116).
TEST(EmuPseudocode, InlineConstantForms) {
  TestKernels k("pseudocode");
  expect_lanes(k.run("k_inline_constants", 64 * 16), [&](uint32_t, const uint32_t* o) {
    EXPECT_EQ(o[0], 0x3e22f983u);
    EXPECT_EQ(o[1], 0x6dc9c882u);   // low dword of the f64 constant + 0
    EXPECT_EQ(o[2], 0x3fc45f30u);
    EXPECT_EQ(o[3] & 0xffffu, 0x3118u);
    EXPECT_EQ(o[4], 0x3c004000u);   // (1 + 1, 1 + 0): the constant's high half is 0
  });
}

}  // namespace
}  // namespace zyfa::emu::test
