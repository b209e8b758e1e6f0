// Scalar ALU: results and SCC of hand-worked cases (expected values in test_emu_salu.cpp).
.include "common.inc"

KERNEL_BEGIN k_salu
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 exec, 1
  // 0,1: unsigned add carry
  s_mov_b32 s4, 0xffffffff
  s_add_u32 s5, s4, 2
  s_cselect_b32 s6, 1, 0
  STORE_S 0, s5
  STORE_S 1, s6
  // 2,3: unsigned subtract borrow
  s_sub_u32 s5, 1, 2
  s_cselect_b32 s6, 1, 0
  STORE_S 2, s5
  STORE_S 3, s6
  // 4,5: signed add overflow
  s_mov_b32 s4, 0x7fffffff
  s_add_i32 s5, s4, 1
  s_cselect_b32 s6, 1, 0
  STORE_S 4, s5
  STORE_S 5, s6
  // 6: add with carry in (SCC = 1 from the compare)
  s_cmp_eq_u32 s4, s4
  s_addc_u32 s5, 5, 6
  STORE_S 6, s5
  // 7,8: bit-field extracts
  s_mov_b32 s4, 0xabcd1234
  s_bfe_u32 s5, s4, 0x80004
  STORE_S 7, s5
  s_mov_b32 s4, 0xf0
  s_bfe_i32 s5, s4, 0x40004
  STORE_S 8, s5
  // 9,10: 64-bit shift
  s_mov_b32 s8, 0x80000001
  s_mov_b32 s9, 0
  s_lshl_b64 s[10:11], s[8:9], 1
  STORE_S 9, s10
  STORE_S 10, s11
  // 11..13: bit scans and counts
  s_mov_b32 s4, 0x100000
  s_ff1_i32_b32 s5, s4
  STORE_S 11, s5
  s_flbit_i32_b32 s5, s4
  STORE_S 12, s5
  s_movk_i32 s4, 0xf0f0
  s_bcnt1_i32_b32 s5, s4
  STORE_S 13, s5
  // 14: high half of a product
  s_mov_b32 s4, 0x80000000
  s_mul_hi_u32 s5, s4, 4
  STORE_S 14, s5
  // 15,16: signed min and its SCC
  s_min_i32 s5, -5, 3
  s_cselect_b32 s6, 1, 0
  STORE_S 15, s5
  STORE_S 16, s6
  // 17: compare and select
  s_cmp_lt_i32 -1, 0
  s_cselect_b32 s5, 7, 9
  STORE_S 17, s5
  // 18: and-not
  s_andn2_b32 s5, 0xff, 0x0f
  STORE_S 18, s5
  // 19: shift-and-add
  s_lshl2_add_u32 s5, 3, 5
  STORE_S 19, s5
  // 20: pack halves
  s_mov_b32 s4, 0xabcd0000
  s_pack_lh_b32_b16 s5, 0x1234, s4
  STORE_S 20, s5
  // 21: a counted loop (s_cbranch_scc1 back edge)
  s_mov_b32 s5, 0
loop:
  s_add_u32 s5, s5, 1
  s_cmp_lt_u32 s5, 10
  s_cbranch_scc1 loop
  STORE_S 21, s5
  // 22: sign-extended SOPK immediate and compare-immediate
  s_movk_i32 s5, 0xfff0
  s_cmpk_eq_i32 s5, 0xfff0
  s_cselect_b32 s6, 1, 0
  STORE_S 22, s5
  STORE_S 23, s6
  // 24: saveexec (EXEC = 1 now): s_and_saveexec with 3 keeps lane 0, returns the old EXEC
  s_mov_b64 s[12:13], 3
  s_and_saveexec_b64 s[14:15], s[12:13]
  STORE_S 24, s14
  // 25: s_abs_i32
  s_abs_i32 s5, -7
  STORE_S 25, s5
  // 26: 64-bit compare
  s_mov_b64 s[12:13], s[8:9]
  s_cmp_eq_u64 s[12:13], s[8:9]
  s_cselect_b32 s5, 1, 0
  STORE_S 26, s5
  s_waitcnt vmcnt(0)
KERNEL_END k_salu
