// Vector memory: buffer range checking, global accesses, and what the emulator reports
// (tests in test_emu_memory.cpp). Arguments: +16 num_records of the `in` buffer resource,
// +20 num_records of the `out` buffer resource.
.include "common.inc"
.include "load_to_lds.inc"

// s[8:11] = raw buffer resource over `in` with num_records = args[0] (word3: DATA_FORMAT 32)
// s[12:15] = the same over `out` with num_records = args[1]
.macro MAKE_RESOURCES
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_load_dwordx2 s[16:17], s[0:1], 0x10
  s_waitcnt lgkmcnt(0)
  RESOURCE_BASE s8, s9, s22, s23
  s_mov_b32 s10, s16
  s_mov_b32 s11, 0x20000
  RESOURCE_BASE s12, s13, s20, s21
  s_mov_b32 s14, s17
  s_mov_b32 s15, 0x20000
.endm

KERNEL_BEGIN k_buffer_range
  MAKE_RESOURCES
  SETUP_LANE_ADDR
  v_lshlrev_b32 v1, 2, v0                 // byte offset lane * 4
  buffer_load_dword v2, v1, s[8:11], 0 offen
  buffer_load_dwordx2 v[4:5], v1, s[8:11], 0 offen
  s_waitcnt vmcnt(0)
  STORE_V 0, v2
  STORE_V 1, v4
  STORE_V 2, v5
  // Store lane + 1000 to word 3 of the lane's row through the out resource.
  v_add_u32 v6, 1000, v0
  v_add_u32 v7, 12, v61
  buffer_store_dword v6, v7, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
KERNEL_END k_buffer_range

// A global store 1 MiB past the output buffer.
KERNEL_BEGIN k_global_outside
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s20, s20, 0x100000
  s_addc_u32 s21, s21, 0
  v_mov_b32 v1, 0
  global_store_dword v1, v1, s[20:21]
  s_waitcnt vmcnt(0)
KERNEL_END k_global_outside

// A global store into the read-only input buffer.
KERNEL_BEGIN k_global_readonly
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, 0
  global_store_dword v1, v1, s[22:23]
  s_waitcnt vmcnt(0)
KERNEL_END k_global_readonly

// Global loads straight to LDS (load_to_lds.inc; test_emu_memory.cpp).
KERNEL_FROM k_load_to_lds, LOAD_TO_LDS, 1, 64, 0, 1280

// The dword form read back by ds_read before s_waitcnt vmcnt: the LDS bytes are written when
// the load completes, so the read is a fault whatever the interleaving.
KERNEL_BEGIN k_load_to_lds_nowait
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0                 // lane * 4
  s_waitcnt lgkmcnt(0)
  s_mov_b32 m0, 0
  s_nop 0
  global_load_lds_dword v1, s[22:23]
  ds_read_b32 v3, v1
  s_waitcnt vmcnt(0) lgkmcnt(0)
KERNEL_END k_load_to_lds_nowait, 64, 0, 1280

// Cache maintenance (no cache model: they only take their place in the counters).
KERNEL_BEGIN k_cache_ops
  buffer_wbl2 sc1
  buffer_inv sc1
  s_dcache_wb
  s_waitcnt vmcnt(0) lgkmcnt(0)
KERNEL_END k_cache_ops
