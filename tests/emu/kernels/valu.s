// Vector ALU: per-lane results incl. VCC/carry, DPP and SDWA (expected values in
// test_emu_valu.cpp). v0 = lane id.
.include "common.inc"

KERNEL_BEGIN k_valu
  LOAD_OUT
  // 0,1,2: 0xffffffff + lane carries out for lanes >= 1; addc adds that carry
  // (a VALU read of VCC needs 2 wait states after a VALU wrote it on gfx940 and later)
  v_add_co_u32 v2, vcc, -1, v0
  s_nop 1
  v_cndmask_b32 v3, 0, 1, vcc
  v_addc_co_u32 v4, vcc, 0, 0, vcc
  STORE_V 0, v2
  STORE_V 1, v3
  STORE_V 2, v4
  // 3: lanes below 10 via v_cmp into VCC
  v_cmp_gt_u32 vcc, 10, v0
  s_nop 1
  v_cndmask_b32 v5, 0, 1, vcc
  STORE_V 3, v5
  // 4: fma(1.5, 2.0, 0.25) = 3.25 exactly (v5 reused as a temporary)
  v_mov_b32 v6, 1.5
  v_mov_b32 v5, 0x3e800000
  v_fma_f32 v7, v6, 2.0, v5
  STORE_V 4, v7
  // 5: byte permute of a:b = 0x11223344:0x55667788 with selector 0x0c0b0400
  v_mov_b32 v8, 0x11223344
  v_mov_b32 v9, 0x55667788
  v_mov_b32 v10, 0x0c0b0400
  v_perm_b32 v11, v8, v9, v10
  STORE_V 5, v11
  // 6: median of (3, 1, 2)
  v_med3_f32 v12, 4.0, 1.0, 2.0
  STORE_V 6, v12
  // 7: 2^3
  v_mov_b32 v13, 0x40400000
  v_exp_f32 v14, v13
  s_nop 0
  STORE_V 7, v14
  // 8: DPP row_shr:1 (lane 0 of each row keeps the old value 0xdead)
  v_mov_b32 v15, 0xdead
  s_nop 1
  v_mov_b32_dpp v15, v0 row_shr:1 row_mask:0xf bank_mask:0xf
  STORE_V 8, v15
  // 9: SDWA: byte 1 of v16 (0xab) + 1 into the high word, low word of v17 preserved
  v_mov_b32 v16, 0xab00
  v_mov_b32 v17, 0x5555
  v_mov_b32 v18, 1
  v_add_u32_sdwa v17, v16, v18 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:DWORD
  s_nop 0
  STORE_V 9, v17
  // 10,11: 0xffffffff * 0xffffffff + 1 = 0xfffffffe00000002
  v_mov_b32 v20, -1
  v_mov_b32 v22, 1
  v_mov_b32 v23, 0
  v_mad_u64_u32 v[24:25], s[30:31], v20, v20, v[22:23]
  STORE_V 10, v24
  STORE_V 11, v25
  // 12: lane id from mbcnt over an all-ones mask
  v_mbcnt_lo_u32_b32 v26, -1, 0
  v_mbcnt_hi_u32_b32 v26, -1, v26
  STORE_V 12, v26
  // 13: readlane of lane 5 broadcast through an SGPR
  v_readlane_b32 s10, v0, 5
  s_nop 1
  v_mov_b32 v27, s10
  STORE_V 13, v27
  // 14: max of -0.0 and NaN with a quiet NaN operand gives the other operand (IEEE mode)
  v_mov_b32 v28, 0x7fc00000
  v_max_f32 v29, v28, -4.0
  STORE_V 14, v29
  // 15: cvt of 2.5 to i32 truncates to 2; rndne(2.5) = 2.0
  v_mov_b32 v30, 2.5
  v_cvt_i32_f32 v31, v30
  v_rndne_f32 v32, v30
  v_cvt_i32_f32 v32, v32
  v_add_u32 v31, v31, v32
  STORE_V 15, v31
  s_waitcnt vmcnt(0)
KERNEL_END k_valu

// v_bitop3_b32 with four truth tables whose bits fall in all three fields that hold the table
// (neg, abs, omod); a has its sign bit set, so that modifiers wrongly applied would show.
KERNEL_BEGIN k_valu_bitop3
  LOAD_OUT
  v_lshlrev_b32 v1, 8, v0
  v_xor_b32 v2, 0x80000001, v1
  v_mov_b32 v3, 0xf0f0000f
  v_bitop3_b32 v4, v2, v0, v3 bitop3:0x78
  v_bitop3_b32 v5, v2, v0, v3 bitop3:0x36
  v_bitop3_b32 v6, v2, v0, v3 bitop3:0x96
  v_bitop3_b32 v7, v2, v0, v3 bitop3:0xe8
  STORE_V 0, v4
  STORE_V 1, v5
  STORE_V 2, v6
  STORE_V 3, v7
  s_waitcnt vmcnt(0)
KERNEL_END k_valu_bitop3

// EXEC masking: only even lanes are active; odd lanes keep the poison already in memory.
KERNEL_BEGIN k_valu_exec
  LOAD_OUT
  v_and_b32 v1, 1, v0
  v_cmp_eq_u32 vcc, 0, v1
  s_and_saveexec_b64 s[4:5], vcc
  v_add_u32 v2, 100, v0
  STORE_V 0, v2
  s_or_b64 exec, exec, s[4:5]
  s_waitcnt vmcnt(0)
KERNEL_END k_valu_exec

// VALU writes VCC, a VALU reads it at once: 2 wait states are required on gfx940+.
.macro VCC_READ n
  v_cmp_gt_u32 vcc, 10, v0
  s_nop \n
  v_cndmask_b32 v5, 0, 1, vcc
.endm
OK_AND_SHORT k_vcc_read, VCC_READ, 1, 0

// A 128-bit global store reads its data after issue: overwriting it needs 2 wait states.
.macro STORE_DATA n
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_mov_b32 v2, 1
  v_mov_b32 v3, 2
  v_mov_b32 v4, 3
  v_mov_b32 v5, 4
  s_waitcnt lgkmcnt(0)
  global_store_dwordx4 v61, v[2:5], s[20:21]
  s_nop \n
  v_mov_b32 v3, 0
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_store_data, STORE_DATA, 1, 0

// Conversions and packed math as the kernels use them: op_sel word/dword selects, SDWA byte
// select (expected values in test_emu_valu.cpp).
KERNEL_BEGIN k_cvt
  LOAD_OUT
  v_mov_b32 v1, 0x12345678
  v_mov_b32 v10, 1.0
  v_mov_b32 v11, -2.0
  v_cvt_pk_fp8_f32 v1, v10, v11 op_sel:[0,0,1]
  s_nop 0
  v_cvt_f32_fp8_sdwa v2, v1 src0_sel:BYTE_3
  v_cvt_pk_bf16_f32 v3, v10, 2.0
  v_mov_b32 v6, 2.0
  v_mov_b32 v7, 0x40400000
  v_mov_b32 v8, 4.0
  v_mov_b32 v9, 0x40a00000
  v_pk_mul_f32 v[4:5], v[6:7], v[8:9]
  v_pk_mul_f32 v[12:13], v[6:7], v[8:9] op_sel:[1,0] op_sel_hi:[0,1]
  STORE_V 0, v1
  STORE_V 1, v2
  STORE_V 2, v3
  STORE_V 3, v4
  STORE_V 4, v5
  v_mov_b32 v14, 0x3e99999a               // 0.3f
  v_cvt_pkrtz_f16_f32 v15, v10, v14
  STORE_V 5, v12
  STORE_V 6, v13
  STORE_V 7, v15
  s_waitcnt vmcnt(0)
KERNEL_END k_cvt

// FP8 conversion overflow: NaN without FP16_OVFL, 448 with it (kernel descriptor bit).
.macro CVT_OVERFLOW
  LOAD_OUT
  v_mov_b32 v1, 0
  v_mov_b32 v2, 0x44000000                // 512.0 > 448
  v_cvt_pk_fp8_f32 v1, v2, v2
  STORE_V 0, v1
  s_waitcnt vmcnt(0)
.endm
KERNEL_BEGIN k_fp8_overflow_nan
  CVT_OVERFLOW
KERNEL_END k_fp8_overflow_nan

.text
.p2align 8
.globl k_fp8_overflow_sat
.type k_fp8_overflow_sat,@function
k_fp8_overflow_sat:
  CVT_OVERFLOW
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel k_fp8_overflow_sat
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 64
  .amdhsa_next_free_vgpr 64
  .amdhsa_next_free_sgpr 64
  .amdhsa_accum_offset 64
  .amdhsa_fp16_overflow 1
.end_amdhsa_kernel
