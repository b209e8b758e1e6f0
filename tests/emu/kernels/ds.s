// LDS instruction forms (test_emu_ds.cpp): single, read2/write2 (incl. st64), b128, atomics,
// sub-dword with sign extension, bpermute, swizzle. v0 = lane id.
.include "common.inc"

KERNEL_BEGIN k_ds
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0                 // byte address lane * 4
  ds_write_b32 v1, v0                     // LDS[lane] = lane
  v_add_u32 v2, 100, v0
  v_add_u32 v3, 200, v0
  ds_write2st64_b32 v1, v2, v3 offset0:1 offset1:2   // LDS[lane + 64] = lane + 100, LDS[lane + 128] = lane + 200
  // One lane zeroes the counter at dword 192 and writes 0x80ff at dword 193.
  s_mov_b64 s[4:5], exec
  s_mov_b64 exec, 1
  v_mov_b32 v6, 0
  v_mov_b32 v7, 0x300
  ds_write_b32 v7, v6
  v_mov_b32 v6, 0x80ff
  ds_write_b16 v7, v6 offset:4
  s_mov_b64 exec, s[4:5]
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read2_b32 v[4:5], v1 offset0:64 offset1:128
  v_and_b32 v6, 15, v0
  v_lshlrev_b32 v6, 4, v6
  ds_read_b128 v[8:11], v6
  v_mov_b32 v7, 0x300
  v_mov_b32 v12, 1
  ds_add_u32 v7, v12
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v13, v7
  ds_read_i8 v14, v7 offset:4
  ds_read_u8 v15, v7 offset:5
  ds_read_i16 v16, v7 offset:4
  v_xor_b32 v17, 1, v0
  v_lshlrev_b32 v17, 2, v17
  ds_bpermute_b32 v18, v17, v0
  ds_swizzle_b32 v19, v0 offset:swizzle(QUAD_PERM,3,2,1,0)
  ds_swizzle_b32 v20, v0 offset:swizzle(SWAP,16)
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v4
  STORE_V 1, v5
  STORE_V 2, v8
  STORE_V 3, v11
  STORE_V 4, v13
  STORE_V 5, v14
  STORE_V 6, v15
  STORE_V 7, v16
  STORE_V 8, v18
  STORE_V 9, v19
  STORE_V 10, v20
  s_waitcnt vmcnt(0)
KERNEL_END k_ds, 64, 0, 1024
