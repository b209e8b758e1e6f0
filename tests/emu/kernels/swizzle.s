// Swizzled buffer resources (tests in test_emu_swizzle.cpp). Arguments: +16 word 1 of the load
// resource above the base (stride and swizzle bits), +20 its word 3, +24 its num_records,
// +28 soffset, +32 word 3 of the ADD_TID resource, +36 its num_records.
// s[8:11] = load resource over `in`; s[12:15] = the same with word 3 / num_records of the
// ADD_TID resource; s[16:19] = swizzled store resource over out + 4096 bytes (stride 16,
// index stride 16, 192 records).
.include "common.inc"

.macro MAKE_SWIZZLED
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_load_dwordx8 s[24:31], s[0:1], 0x10
  s_waitcnt lgkmcnt(0)
  RESOURCE_BASE s8, s9, s22, s23
  s_or_b32 s9, s9, s24
  s_mov_b32 s10, s26
  s_mov_b32 s11, s25
  s_mov_b32 s12, s8
  s_mov_b32 s13, s9
  s_mov_b32 s14, s29
  s_mov_b32 s15, s28
  s_add_u32 s16, s20, 4096
  s_addc_u32 s17, s21, 0
  s_and_b32 s17, s17, 0xffff
  s_or_b32 s17, s17, 0x80100000          // swizzle enable, stride 16
  s_mov_b32 s18, 192
  s_mov_b32 s19, 0x00220000              // DATA_FORMAT 32, INDEX_STRIDE 16
.endm

// Per lane: index v2 = 3 * lane, offset v3 = 4 * (lane % 3).
.macro LANE_INDEX_OFFSET
  v_mul_u32_u24 v2, 3, v0
  s_mov_b32 s40, 0xaaaaaaab
  v_mul_hi_u32 v4, v0, s40               // lane / 3
  v_lshrrev_b32 v4, 1, v4
  v_mul_u32_u24 v4, 3, v4
  v_sub_u32 v3, v0, v4                   // lane % 3
  v_lshlrev_b32 v3, 2, v3
.endm

// out[lane*16+0] = load(idxen offen offset:4), out[+1] = the ADD_TID resource's load,
// out[+2] = the same as +0 loaded to LDS; swizzled store of lane + 7777 (index lane) into out+4096.
KERNEL_BEGIN k_buffer_swizzle
  MAKE_SWIZZLED
  SETUP_LANE_ADDR
  LANE_INDEX_OFFSET
  buffer_load_dword v6, v[2:3], s[8:11], s27 idxen offen offset:4
  buffer_load_dword v7, v[2:3], s[12:15], s27 idxen offen offset:4
  s_mov_b32 m0, 0
  s_nop 0
  buffer_load_dword v[2:3], s[8:11], s27 idxen offen offset:4 lds
  v_add_u32 v8, 7777, v0
  v_mov_b32 v10, v0
  v_mov_b32 v11, v3
  buffer_store_dword v8, v[10:11], s[16:19], 0 idxen offen offset:4
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v13, 2, v0
  ds_read_b32 v12, v13 offset:4
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v6
  STORE_V 1, v7
  STORE_V 2, v12
  s_waitcnt vmcnt(0)
KERNEL_END k_buffer_swizzle, lds=512

// A dwordx2 load through the swizzled resource: wider than the swizzle element.
KERNEL_BEGIN k_buffer_swizzle_wide
  MAKE_SWIZZLED
  v_mov_b32 v2, 0
  buffer_load_dwordx2 v[6:7], v2, s[8:11], 0 offen
  s_waitcnt vmcnt(0)
KERNEL_END k_buffer_swizzle_wide

// A dword load at byte offset 2 through the swizzled resource: not dword aligned.
KERNEL_BEGIN k_buffer_swizzle_unaligned
  MAKE_SWIZZLED
  v_mov_b32 v2, 2
  buffer_load_dword v6, v2, s[8:11], 0 offen
  s_waitcnt vmcnt(0)
KERNEL_END k_buffer_swizzle_unaligned
