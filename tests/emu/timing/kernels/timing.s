// Micro-kernels whose MI355X timing can be worked out by hand (test_timing_model.cpp).
// No prologue: the first instruction issues as the wave starts.
.include "common.inc"

// 32 dependent 8-pass MFMAs accumulating into one register block.
KERNEL_BEGIN k_mfma_chain
  .rept 32
  v_mfma_f32_32x32x16_bf16 a[0:15], v[0:3], v[4:7], a[0:15]
  .endr
KERNEL_END k_mfma_chain, 64, 16

// 64 dependent full-rate VALU operations.
KERNEL_BEGIN k_valu_chain
  .rept 64
  v_add_f32 v1, v1, v2
  .endr
KERNEL_END k_valu_chain

// 16 dependent transcendentals (quarter rate).
KERNEL_BEGIN k_trans_chain
  .rept 16
  v_exp_f32 v1, v1
  .endr
KERNEL_END k_trans_chain

// A scalar load, then a global load of 256 contiguous bytes, each waited for.
KERNEL_BEGIN k_load_latency
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v2, 2, v0
  global_load_dword v1, v2, s[20:21]
  s_waitcnt vmcnt(0)
KERNEL_END k_load_latency

// Eight ds_read_b32: lanes 4 bytes apart (no bank conflict) or 256 bytes apart (every lane
// in bank 0).
.macro LDS_READS stride_shift
  v_lshlrev_b32 v2, \stride_shift, v0
  .irp r, 10, 11, 12, 13, 14, 15, 16, 17
  ds_read_b32 v\r, v2
  .endr
  s_waitcnt lgkmcnt(0)
.endm
KERNEL_FROM k_lds_no_conflict, LDS_READS, 2, 64, 0, 16384
KERNEL_FROM k_lds_conflict, LDS_READS, 8, 64, 0, 16384

// Five waves (wave 4 shares SIMD 0 with wave 0): wave 0 runs 32 MFMAs of 8 passes, wave 4
// runs 224 VALU operations, waves 1-3 end at once.
KERNEL_BEGIN k_mfma_valu_two_waves
  v_readfirstlane_b32 s4, v0
  s_nop 1
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc1 .Lmfma
  s_cmp_eq_u32 s4, 256
  s_cbranch_scc1 .Lvalu
  s_endpgm
.Lmfma:
  .rept 32
  v_mfma_f32_32x32x16_bf16 a[0:15], v[0:3], v[4:7], a[0:15]
  .endr
  s_endpgm
.Lvalu:
  .rept 224
  v_add_f32 v1, v1, v2
  .endr
KERNEL_END k_mfma_valu_two_waves, 64, 16
