// The FP8 d 128 key-loop schedule the reference system describes (a two-wave ping-pong per
// SIMD with lean P), reduced to its issue pattern for the timing model's second anchor
// (test_timing_anchor.cpp). Values are meaningless; the instruction mix, order, dependencies
// and memory addresses are those of one 32-query x 128-key block per wave:
//   M phase: QK^T, 8 MFMAs 32x32x64 FP8 (16 passes; K from LDS the A operand, Q in registers
//            the B operand), each preceded by the two ds_read_b128 of its K operand one MFMA
//            ahead; then PV, 8 more with V from LDS; then the row sum, 2 MFMAs 16x16x128 FP8
//            (8 passes) with a ones operand: 16 x 64 + 2 x 32 = 1088 matrix-pipe clocks.
//   V phase: lean P on the 64 scores a lane holds: 32 v_max3 (row max), 32 v_pk_fma_f32
//            (two multiply-adds writing FP8 codes as numbers), 32 v_perm_b32 (integer codes
//            packed into the P operand): 96 VALU operations, 384 clocks; and the wave's
//            eighth of the next K and V tiles (32 KiB per block) loaded into LDS. The same
//            32 KiB every block: in the steady state the reference's K and V tiles come from
//            the L2, read there by the other workgroups of the XCD (the model's HBM share
//            would otherwise bound a lone workgroup; test_timing_memory.cpp checks that).
// Waves 0-3 begin with an M phase, waves 4-7 (the other wave of each SIMD) with a V phase;
// an s_barrier after each phase swaps them. Arguments: +8 in (32 KiB of K and V tiles). LDS: the K and V tiles read at [0, 36 KiB), the landing tile at [36 KiB, 68 KiB).
.include "common.inc"

.set KROW, 144          // LDS bytes per K (and V^T) row: 128 + 16, banks staggered
.set VT, 128 * KROW     // V^T tile after K
.set LAND, 2 * VT       // where the next tiles land

// The A operand of MFMA j (8 VGPRs) from rows 32 j' .. of K (or V^T at \base) into \dst.
.macro OPERAND dst0, dst1, base, j
  ds_read_b128 v[\dst0:\dst0+3], v3 offset:(\base + (\j / 2) * 32 * KROW + (\j % 2) * 64)
  ds_read_b128 v[\dst1:\dst1+3], v3 offset:(\base + (\j / 2) * 32 * KROW + (\j % 2) * 64 + 16)
.endm

.macro MPHASE
  OPERAND 24, 28, 0, 0
  .irp j, 0, 1, 2, 3, 4, 5, 6, 7
    .if \j % 2
      OPERAND 24, 28, 0, (\j + 1)
    .else
      OPERAND 32, 36, 0, (\j + 1)
    .endif
    s_waitcnt lgkmcnt(2)
    .if \j % 2
      v_mfma_f32_32x32x64_f8f6f4 v[64 + 16 * (\j / 2):79 + 16 * (\j / 2)], v[32:39], v[16:23], v[64 + 16 * (\j / 2):79 + 16 * (\j / 2)]
    .else
      v_mfma_f32_32x32x64_f8f6f4 v[64 + 16 * (\j / 2):79 + 16 * (\j / 2)], v[24:31], v[8:15], v[64 + 16 * (\j / 2):79 + 16 * (\j / 2)]
    .endif
  .endr
  // OPERAND 8 above read V^T's first operand into v[24:31] (j = 8 is row block 4 of the
  // K tile, the same LDS traffic); PV continues from it.
  .irp j, 0, 1, 2, 3, 4, 5, 6, 7
    .if \j < 7
      .if \j % 2
        OPERAND 24, 28, VT, (\j + 1)
      .else
        OPERAND 32, 36, VT, (\j + 1)
      .endif
      s_waitcnt lgkmcnt(2)
    .else
      s_waitcnt lgkmcnt(0)
    .endif
    .if \j % 2
      v_mfma_f32_32x32x64_f8f6f4 a[16 * (\j / 2):15 + 16 * (\j / 2)], v[32:39], v[48:55], a[16 * (\j / 2):15 + 16 * (\j / 2)]
    .else
      v_mfma_f32_32x32x64_f8f6f4 a[16 * (\j / 2):15 + 16 * (\j / 2)], v[24:31], v[40:47], a[16 * (\j / 2):15 + 16 * (\j / 2)]
    .endif
  .endr
  v_mfma_f32_16x16x128_f8f6f4 a[64:67], v[56:63], v[40:47], a[64:67]
  v_mfma_f32_16x16x128_f8f6f4 a[64:67], v[56:63], v[48:55], a[64:67]
.endm

.macro VPHASE
  // The next tiles into LDS (4 KiB per wave: four 1 KiB loads), waited for at the end.
  global_load_lds_dwordx4 v4, s[20:21]
  global_load_lds_dwordx4 v4, s[20:21] offset:1024
  global_load_lds_dwordx4 v4, s[20:21] offset:2048
  global_load_lds_dwordx4 v4, s[20:21] offset:3072
  .irp r, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, 102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126
    v_max3_f32 v130, v130, v\r, v[\r + 1]
  .endr
  .irp r, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, 102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126
    v_pk_fma_f32 v[\r:\r+1], v[\r:\r+1], v[132:133], v[134:135]
  .endr
  .irp p, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55
    v_perm_b32 v\p, v[2 * \p - 16], v[2 * \p - 15], v136
    v_perm_b32 v\p, v[2 * \p - 14], v\p, v136
  .endr
  s_waitcnt vmcnt(0)
.endm

.macro PINGPONG name, blocks
KERNEL_BEGIN \name
  s_load_dwordx2 s[20:21], s[0:1], 0x8
  v_lshrrev_b32 v1, 8, v0                  // 0: waves 0-3, 1: waves 4-7
  v_and_b32 v2, 63, v0
  v_readfirstlane_b32 s4, v1
  v_and_b32 v3, 31, v2
  v_mul_u32_u24 v3, KROW, v3               // operand row lane % 32
  v_lshrrev_b32 v5, 5, v2
  v_lshl_add_u32 v3, v5, 5, v3             // + 32 bytes for lanes 32-63
  v_lshrrev_b32 v6, 6, v0
  v_lshlrev_b32 v6, 12, v6                 // wave * 4 KiB
  v_lshlrev_b32 v4, 4, v2
  s_nop 0
  v_add_u32 v4, v4, v6                     // global: the wave's 4 KiB of the block, 16 B a lane
  v_readfirstlane_b32 s5, v6
  s_add_u32 m0, s5, LAND                   // the wave's 4 KiB of the landing tiles
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc1 1f
  VPHASE
  s_barrier
1:
  .rept \blocks
    MPHASE
    s_barrier
    VPHASE
    s_barrier
  .endr
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc0 2f
  s_barrier
2:
KERNEL_END \name, 160, 72, 2 * VT + 32768
.endm
PINGPONG k_fp8_pingpong_4, 4
PINGPONG k_fp8_pingpong_8, 8
