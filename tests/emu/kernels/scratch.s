// The private segment (tests in test_emu_scratch.cpp). Each kernel's descriptor enables a
// private segment (gfx950: architected flat scratch sets FLAT_SCRATCH).
.include "common.inc"

.macro SCRATCH_KERNEL_END name, private
  s_endpgm
  .rodata
  .p2align 6
  .amdhsa_kernel \name
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_private_segment_size 1
    .amdhsa_kernarg_size 64
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_enable_private_segment 1
    .amdhsa_private_segment_fixed_size \private
    .amdhsa_next_free_vgpr 64
    .amdhsa_next_free_sgpr 64
    .amdhsa_accum_offset 64
  .end_amdhsa_kernel
.endm

// Private dwords 0..10 of each lane = in[lane*16 + k], written with the vaddr, saddr and
// immediate forms. Then out[lane*16 + k] = the dword at scratch byte (64 k + lane) * 4 read
// through a raw buffer over FLAT_SCRATCH (the interleaved layout); out[+11], out[+12] =
// private dwords 3 and 9 through a swizzled ADD_TID resource (index stride 64); out[+13],
// out[+14] = private dwords 10 and 5 through scratch loads; out[+15] = the private segment
// size SGPR (s2).
KERNEL_BEGIN k_scratch_layout
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  SETUP_LANE_ADDR
  global_load_dwordx4 v[10:13], v61, s[22:23]
  global_load_dwordx4 v[14:17], v61, s[22:23] offset:16
  global_load_dwordx4 v[18:21], v61, s[22:23] offset:32
  s_waitcnt vmcnt(0)
  scratch_store_dwordx4 off, v[10:13], off
  scratch_store_dwordx4 off, v[14:17], off offset:16
  v_mov_b32 v2, 32
  scratch_store_dword v2, v18, off
  s_mov_b32 s30, 36
  scratch_store_dword off, v19, s30
  s_mov_b32 s31, 0
  scratch_store_dword v2, v20, s31 offset:8
  s_waitcnt vmcnt(0)
  // Raw view of the wave's scratch: base FLAT_SCRATCH, 64 lanes x 64 bytes.
  s_mov_b32 s24, flat_scratch_lo
  s_and_b32 s25, flat_scratch_hi, 0xffff
  s_mov_b32 s26, 4096
  s_mov_b32 s27, 0x20000
  // Private resource: swizzle, ADD_TID, INDEX_STRIDE 64, stride 0, num_records = lane bytes.
  s_mov_b32 s28, flat_scratch_lo
  s_and_b32 s29, flat_scratch_hi, 0xffff
  s_or_b32 s29, s29, 0x80000000
  s_mov_b32 s30, 64
  s_mov_b32 s31, 0x00e00000
  v_lshlrev_b32 v3, 2, v0
  s_nop 4
.irp k, 0,1,2,3,4,5,6,7,8,9,10
  buffer_load_dword v[22+\k], v3, s[24:27], 0 offen offset:(256*\k)
.endr
  buffer_load_dword v33, off, s[28:31], 0 offset:12
  buffer_load_dword v34, off, s[28:31], 0 offset:36
  scratch_load_dword v35, v2, off offset:8
  scratch_load_dword v36, off, off offset:20
  s_waitcnt vmcnt(0)
.irp k, 0,1,2,3,4,5,6,7,8,9,10
  STORE_V \k, v[22+\k]
.endr
  STORE_V 11, v33
  STORE_V 12, v34
  STORE_V 13, v35
  STORE_V 14, v36
  v_mov_b32 v37, s2
  STORE_V 15, v37
  s_waitcnt vmcnt(0)
SCRATCH_KERNEL_END k_scratch_layout, 64

// A store at private offset 16 of a 16-byte segment.
KERNEL_BEGIN k_scratch_oob
  v_mov_b32 v1, 1
  scratch_store_dword off, v1, off offset:16
  s_waitcnt vmcnt(0)
SCRATCH_KERNEL_END k_scratch_oob, 16

// A dword load at private offset 2.
KERNEL_BEGIN k_scratch_unaligned
  scratch_load_dword v1, off, off offset:2
  s_waitcnt vmcnt(0)
SCRATCH_KERNEL_END k_scratch_unaligned, 16
