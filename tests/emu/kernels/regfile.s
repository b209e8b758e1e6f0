// The unified VGPR/AGPR file (test_emu_regfile.cpp): v[i] is physical i, a[j] is physical
// accum_offset + j, and a kernel may name any v[i] below its total allocation.
.include "common.inc"

// accum_offset 160, 256 registers, no AGPRs used (the allocation of AMD's hd128 forward
// kernels): v160..v255 are ordinary VGPRs.
KERNEL_BEGIN k_high_vgprs
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_mul_u32_u24 v160, 3, v0
  v_add_u32 v254, 7, v160
  v_add_u32 v255, v254, v160
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v160
  STORE_V 1, v254
  STORE_V 2, v255
  s_waitcnt vmcnt(0)
KERNEL_END k_high_vgprs, 160, 96

// accum_offset 64, 128 registers: v100 and a36 are one physical register, as are a10 and v74.
KERNEL_BEGIN k_alias
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_add_u32 v100, 11, v0
  v_accvgpr_write_b32 a10, v100
  v_mov_b32 v2, v0
  v_accvgpr_read_b32 v1, a36
  v_add_u32 v3, v74, v0
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v1
  STORE_V 1, v3
  s_waitcnt vmcnt(0)
KERNEL_END k_alias, 64, 64

// A load into v100 still in flight when a36 (the same register) is read: a missing wait.
KERNEL_BEGIN k_alias_pending
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  v_mov_b32 v1, 0
  s_waitcnt lgkmcnt(0)
  global_load_dword v100, v1, s[22:23]
  v_accvgpr_read_b32 v2, a36
  s_waitcnt vmcnt(0)
KERNEL_END k_alias_pending, 64, 64

// v128 with a total allocation of 128: beyond the file.
KERNEL_BEGIN k_past_total
  v_mov_b32 v128, 0
KERNEL_END k_past_total, 64, 64

// a64 with accum_offset 64 and 128 registers: beyond the file.
KERNEL_BEGIN k_agpr_past_total
  v_accvgpr_write_b32 a64, 0
KERNEL_END k_agpr_past_total, 64, 64

// An MFMA whose destination range runs past a127 of a file of 128 + 128: refused before any
// register or scoreboard entry is touched.
KERNEL_BEGIN k_mfma_dst_past_agprs
  v_mfma_f32_16x16x32_bf16 a[126:129], v[0:3], v[4:7], 0
KERNEL_END k_mfma_dst_past_agprs, 128, 128
