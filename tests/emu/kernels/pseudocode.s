// Cases where the CDNA4 ISA pseudocode and a natural C++ reading differ (expected values and
// sources in test_emu_pseudocode.cpp). v0 = lane id; results at out[lane * 16 + index].
.include "common.inc"

// v_mad_i64_i32 {D1, D0} = \a * \b + (\c_hi:\c_lo): out[\index] = \d0_dword (v16 the low
// dword of D0, v17 the high), out[\index + 1] = D1.
.macro MAD_I64_I32 a, b, c_lo, c_hi, d0_dword, index
  v_mov_b32 v11, \a
  v_mov_b32 v15, \b
  v_mov_b32 v12, \c_lo
  v_mov_b32 v13, \c_hi
  v_mad_i64_i32 v[16:17], s[30:31], v11, v15, v[12:13]
  s_nop 1
  v_cndmask_b32 v18, 0, 1, s[30:31]
  STORE_V \index, \d0_dword
  STORE_V (\index + 1), v18
.endm

// SDWA dst_unused:UNUSED_SEXT, IEEE-mode NaN rules of v_max/v_min/v_max3, the carry-out of
// v_mad_i64_i32. Assembled twice: MODE.IEEE on and off.
.macro PSEUDOCODE_CASES
  LOAD_OUT
  // 0: a field ending at bit 31 has no bits above it to sign-extend: 0x8001 -> 0x80010000
  v_mov_b32 v1, 0x8001
  s_nop 1
  v_mov_b32_sdwa v2, v1 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:WORD_0
  // 1: BYTE_1 of 0x80 -> 0x8000, sign bit 15 copied upwards, bits 7:0 zero: 0xffff8000
  v_mov_b32 v3, 0x80
  s_nop 1
  v_mov_b32_sdwa v4, v3 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_0
  s_nop 0
  STORE_V 0, v2
  STORE_V 1, v4
  // 2..5: signaling NaN 0x7f800001 against 1.0 (v6) and 2.0
  v_mov_b32 v5, 0x7f800001
  v_mov_b32 v6, 1.0
  v_max_f32 v7, v5, v6
  v_min_f32 v8, v6, v5
  v_max3_f32 v9, 2.0, v5, v6
  v_med3_f32 v10, v5, 2.0, v6
  STORE_V 2, v7
  STORE_V 3, v8
  STORE_V 4, v9
  STORE_V 5, v10
  // 6..9: v_mad_i64_i32 D1 = bit 64 of the 65-bit sum: (-1) * 1 + 0 = -1 -> D1 = 1
  MAD_I64_I32 -1, 1, 0, 0, v16, 6
  // 2 * 3 + 0x7fffffffffffffff = 2^63 + 5: fits in 65 bits, bit 64 = 0 (not an overflow flag)
  MAD_I64_I32 2, 3, -1, 0x7fffffff, v17, 8
  s_waitcnt vmcnt(0)
.endm

KERNEL_BEGIN k_pseudocode_ieee
  PSEUDOCODE_CASES
KERNEL_END k_pseudocode_ieee

KERNEL_BEGIN k_pseudocode_noieee
  PSEUDOCODE_CASES
KERNEL_END k_pseudocode_noieee, 64, 0, 0, 0

// ds_min_f32 / ds_max_f32 are plain comparisons: a NaN in memory stays. Lane slot lane * 4.
KERNEL_BEGIN k_ds_minmax_nan
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  v_add_u32 v2, 256, v1
  v_mov_b32 v3, 0x7fc00000
  v_mov_b32 v4, 2.0
  ds_write_b32 v1, v3
  ds_write_b32 v2, v3
  ds_min_f32 v1, v4
  ds_max_f32 v2, v4
  ds_read_b32 v5, v1
  ds_read_b32 v6, v2
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v5
  STORE_V 1, v6
  s_waitcnt vmcnt(0)
KERNEL_END k_ds_minmax_nan, 64, 0, 512

// Packed f32 with an inline constant: the ISA leaves the high dword undefined.
KERNEL_BEGIN k_pk_f32_inline_constant
  v_mov_b32 v2, 1.0
  v_mov_b32 v3, 2.0
  v_pk_mul_f32 v[4:5], v[2:3], 1.0
KERNEL_END k_pk_f32_inline_constant

// v_permlane32_swap / v_permlane16_swap with all lanes active (CDNA4 pseudocode).
KERNEL_BEGIN k_permlane_swap
  LOAD_OUT
  v_mov_b32 v1, v0
  v_add_u32 v2, 100, v0
  v_mov_b32 v3, v0
  v_add_u32 v4, 100, v0
  s_nop 1
  v_permlane32_swap_b32 v1, v2
  v_permlane16_swap_b32 v3, v4
  STORE_V 0, v1
  STORE_V 1, v2
  STORE_V 2, v3
  STORE_V 3, v4
  s_waitcnt vmcnt(0)
KERNEL_END k_permlane_swap

// The same with only the low 32 lanes active: EXEC is not applied, every pair moves.
KERNEL_BEGIN k_permlane_swap_partial_exec
  LOAD_OUT
  v_mov_b32 v1, v0
  v_add_u32 v2, 100, v0
  s_mov_b32 exec_hi, 0
  s_nop 4
  v_permlane32_swap_b32 v1, v2
  s_mov_b32 exec_hi, -1
  STORE_V 0, v1
  STORE_V 1, v2
  s_waitcnt vmcnt(0)
KERNEL_END k_permlane_swap_partial_exec

// v_div_fmas_f32 after a VALU write of VCC: 4 wait states required. VCC = lanes below 32;
// fma(1.5, 2.0, 0.25) = 3.25, scaled by 2^32 where VCC is set.
.macro DIV_FMAS nops
  LOAD_OUT
  v_mov_b32 v1, 1.5
  v_mov_b32 v2, 2.0
  v_mov_b32 v3, 0x3e800000
  v_cmp_gt_u32 vcc, 32, v0
  s_nop \nops
  v_div_fmas_f32 v4, v1, v2, v3
  STORE_V 0, v4
  s_waitcnt vmcnt(0)
.endm

KERNEL_FROM k_div_fmas_ok, DIV_FMAS, 3

KERNEL_FROM k_div_fmas_short, DIV_FMAS, 2

// s_setreg of MODE then s_getreg / s_setreg of MODE: 2 wait states required.
.macro SETREG_GETREG nops
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
  s_nop \nops
  s_getreg_b32 s5, hwreg(HW_REG_MODE, 4, 4)
  STORE_S 0, s5
  s_waitcnt vmcnt(0)
.endm

KERNEL_FROM k_setreg_getreg_ok, SETREG_GETREG, 1

KERNEL_FROM k_setreg_getreg_short, SETREG_GETREG, 0

KERNEL_BEGIN k_setreg_setreg_short
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
  s_nop 0
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
KERNEL_END k_setreg_setreg_short

// An MFMA with only the low 32 lanes active: refused (undefined by the ISA).
KERNEL_BEGIN k_mfma_partial_exec
  s_mov_b32 exec_hi, 0
  s_nop 4
  v_mfma_f32_32x32x16_bf16 v[0:15], v[16:19], v[20:23], 0
KERNEL_END k_mfma_partial_exec

// SCC of s_max on equal operands (S0 >= S1) and s_absdiff_i32 computed in 32 bits.
KERNEL_BEGIN k_salu_pseudocode
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s2, 7
  s_max_u32 s3, s2, s2
  s_cselect_b32 s4, 1, 0
  STORE_S 0, s4
  s_mov_b32 s2, -3
  s_max_i32 s3, s2, s2
  s_cselect_b32 s4, 1, 0
  STORE_S 1, s4
  s_min_u32 s3, s2, s2
  s_cselect_b32 s4, 1, 0
  STORE_S 2, s4
  s_brev_b32 s2, 1                        // INT_MIN
  s_not_b32 s5, s2                        // INT_MAX
  s_absdiff_i32 s6, s5, s2
  STORE_S 3, s6
  s_waitcnt vmcnt(0)
KERNEL_END k_salu_pseudocode

// omod (mul:2): ignored by the hardware under MODE.IEEE or f32 output denormals, applied
// otherwise.
.macro OMOD_CASE
  LOAD_OUT
  v_mov_b32 v1, 1.5
  v_mul_f32_e64 v2, v1, 2.0 mul:2
  STORE_V 0, v2
  s_waitcnt vmcnt(0)
.endm

KERNEL_BEGIN k_omod_ieee
  OMOD_CASE
KERNEL_END k_omod_ieee

KERNEL_BEGIN k_omod_denorm_out
  OMOD_CASE
KERNEL_END k_omod_denorm_out, 64, 0, 0, 0, 3

KERNEL_BEGIN k_omod_applied
  OMOD_CASE
KERNEL_END k_omod_applied, 64, 0, 0, 0, 0

// clamp where it is modelled (f32 results: [0, 1]; v_add_u32: unsigned saturation) and on an
// instruction that has no modelled clamp (refused).
KERNEL_BEGIN k_clamp_modelled
  LOAD_OUT
  v_mov_b32 v1, 2.0
  v_add_f32_e64 v2, v1, 1.0 clamp
  v_mov_b32 v3, -1
  v_add_u32_e64 v4, v3, 2 clamp
  STORE_V 0, v2
  STORE_V 1, v4
  s_waitcnt vmcnt(0)
KERNEL_END k_clamp_modelled

KERNEL_BEGIN k_clamp_cvt_pk_bf16
  v_mov_b32 v1, 1.0
  v_cvt_pk_bf16_f32 v2, v1, v1 clamp
KERNEL_END k_clamp_cvt_pk_bf16

KERNEL_BEGIN k_clamp_cvt_f32_fp8
  v_mov_b32 v1, 0x38
  v_cvt_f32_fp8_e64 v2, v1 clamp
KERNEL_END k_clamp_cvt_f32_fp8

KERNEL_BEGIN k_clamp_add_co
  v_mov_b32 v1, -1
  v_add_co_u32_e64 v2, s[4:5], v1, 2 clamp
KERNEL_END k_clamp_add_co

// v_cvt_f32_i32 under a round mode other than nearest-even: refused (only RNE is modelled).
KERNEL_BEGIN k_cvt_f32_i32_round_mode
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 3
  s_nop 1
  v_mov_b32 v1, 0x1000001
  v_cvt_f32_i32 v2, v1
KERNEL_END k_cvt_f32_i32_round_mode

// DPP lane selection, row/bank masks and bound_ctrl; SDWA source sign extension. v0 = lane;
// every destination starts as 1000 + lane, so an unwritten lane keeps that value.
KERNEL_BEGIN k_dpp_sdwa_forms
  LOAD_OUT
  v_add_u32 v3, 1000, v0
  v_add_u32 v4, 1000, v0
  v_add_u32 v5, 1000, v0
  v_add_u32 v6, 1000, v0
  v_add_u32 v7, 1000, v0
  v_add_u32 v8, 1000, v0
  v_mov_b32 v10, 0xff
  v_mov_b32 v11, 5
  s_nop 1
  v_mov_b32_dpp v3, v0 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v4, v0 row_ror:4 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v5, v0 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
  v_mov_b32_dpp v6, v0 row_shr:1 row_mask:0xf bank_mask:0x5
  v_mov_b32_dpp v7, v0 row_bcast:15 row_mask:0xa bank_mask:0xf
  v_mov_b32_dpp v8, v0 wave_shr:1 row_mask:0xf bank_mask:0xf
  v_add_u32_sdwa v9, sext(v10), v11 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD
  STORE_V 0, v3
  STORE_V 1, v4
  STORE_V 2, v5
  STORE_V 3, v6
  STORE_V 4, v7
  STORE_V 5, v8
  STORE_V 6, v9
  s_waitcnt vmcnt(0)
KERNEL_END k_dpp_sdwa_forms

// v_cvt_f32_fp8 byte select through VOP3 op_sel: refused (only SDWA_SRC0_SEL is documented).
KERNEL_BEGIN k_cvt_f32_fp8_vop3_opsel
  v_mov_b32 v1, 0x38
  // v_cvt_f32_fp8_e64 v2, v1 with OPSEL[0] set: the assembler has no syntax for it on gfx950
  .long 0xd1940802, 0x00000101
KERNEL_END k_cvt_f32_fp8_vop3_opsel

// Float to integer conversions (the generated FP8 kernel builds its P codes with v_cvt_u32_f32):
// truncation toward zero, saturation at the range ends, NaN to 0.
KERNEL_BEGIN k_cvt_float_to_int
  LOAD_OUT
  v_mov_b32 v1, 0x40300000                // 2.75
  v_cvt_u32_f32 v2, v1
  v_mov_b32 v1, 0xbfc00000                // -1.5
  v_cvt_u32_f32 v3, v1
  v_mov_b32 v1, 0x4f9502f9                // 5.0e9
  v_cvt_u32_f32 v4, v1
  v_mov_b32 v1, 0x7fc00000                // NaN
  v_cvt_u32_f32 v5, v1
  v_mov_b32 v1, 0xc0300000                // -2.75
  v_cvt_i32_f32 v6, v1
  v_mov_b32 v1, 0xd0000000                // -8.6e9
  v_cvt_i32_f32 v7, v1
  v_mov_b32 v1, 0x3f7fffff                // 0.99999994
  v_cvt_u32_f32 v8, v1
  STORE_V 0, v2
  STORE_V 1, v3
  STORE_V 2, v4
  STORE_V 3, v5
  STORE_V 4, v6
  STORE_V 5, v7
  STORE_V 6, v8
  s_waitcnt vmcnt(0)
KERNEL_END k_cvt_float_to_int

// The inline constant 1/(2*pi) (operand 248) in its f32, f64 and f16 forms, and a packed f16
// operation reading an inline constant (the high half of a packed inline constant is 0 on gfx9).
KERNEL_BEGIN k_inline_constants
  LOAD_OUT
  v_mov_b32 v1, 0.15915494
  v_add_f64 v[2:3], 0.15915494309189532, 0
  v_add_f16 v4, 0.15915494, 0
  v_mov_b32 v5, 0x3c003c00                // f16 pair (1.0, 1.0)
  v_pk_add_f16 v6, v5, 1.0
  STORE_V 0, v1
  STORE_V 1, v2
  STORE_V 2, v3
  STORE_V 3, v4
  STORE_V 4, v6
  s_waitcnt vmcnt(0)
KERNEL_END k_inline_constants
