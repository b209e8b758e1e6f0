// Transposing LDS reads (test_emu_ds_transpose.cpp). `in` (1024 bytes) is copied to LDS, lane
// l at bytes 16l..16l+15; each lane then reads at 16 * (l ^ arg0) (+ 8 for tr_b8) and stores
// what it got. Arguments: +16 u32 lane xor, +20 u32 EXEC low half for k_ds_tr_exec.
.include "common.inc"

KERNEL_BEGIN k_ds_tr
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  s_load_dword s24, s[0:1], 0x10
  SETUP_LANE_ADDR
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 4, v0                 // lane * 16
  global_load_dwordx4 v[2:5], v1, s[22:23]
  s_waitcnt vmcnt(0)
  ds_write_b128 v1, v[2:5]
  s_waitcnt lgkmcnt(0)
  v_xor_b32 v6, s24, v0
  v_lshlrev_b32 v6, 4, v6
  ds_read_b64_tr_b16 v[8:9], v6
  ds_read_b64_tr_b8 v[10:11], v6 offset:8
  ds_read_b64_tr_b4 v[12:13], v6
  ds_read_b96_tr_b6 v[14:16], v6
  ds_read_b64_tr_b16 a[0:1], v6 offset:8
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v8
  STORE_V 1, v9
  STORE_V 2, v10
  STORE_V 3, v11
  STORE_V 4, v12
  STORE_V 5, v13
  STORE_V 6, v14
  STORE_V 7, v15
  STORE_V 8, v16
  v_accvgpr_read_b32 v17, a0
  v_accvgpr_read_b32 v18, a1
  s_nop 1
  STORE_V 9, v17
  STORE_V 10, v18
  s_waitcnt vmcnt(0)
KERNEL_END k_ds_tr, 64, 4, 1024

// The same read with only part of a 16-lane group active: refused.
KERNEL_BEGIN k_ds_tr_exec
  s_load_dword s24, s[0:1], 0x14
  v_lshlrev_b32 v1, 4, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 exec_lo, s24
  ds_read_b64_tr_b16 v[2:3], v1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_ds_tr_exec, 64, 0, 1024

// A lane address that is not 8-byte aligned: refused.
KERNEL_BEGIN k_ds_tr_unaligned
  v_lshlrev_b32 v1, 4, v0
  ds_read_b64_tr_b8 v[2:3], v1 offset:4
  s_waitcnt lgkmcnt(0)
KERNEL_END k_ds_tr_unaligned, 64, 0, 1024

// LDS reads whose destination registers run past the allocation (64 VGPRs, no AGPRs):
// a fault at issue, never a write past the register file when the read lands.
KERNEL_BEGIN k_ds_dst_past_vgprs
  v_mov_b32 v1, 0
  ds_read_b128 v[62:65], v1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_ds_dst_past_vgprs, 64, 0, 1024

KERNEL_BEGIN k_ds_tr_dst_past_vgprs
  v_lshlrev_b32 v1, 4, v0
  ds_read_b96_tr_b6 v[62:64], v1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_ds_tr_dst_past_vgprs, 64, 0, 1024

KERNEL_BEGIN k_ds_dst_past_agprs
  v_mov_b32 v1, 0
  ds_read_b128 a[2:5], v1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_ds_dst_past_agprs, 60, 4, 1024
