// Vector-memory micro-kernels of the timing model's memory system (test_timing_memory.cpp).
// Arguments: +0 out, +8 in. 256 work-items (one wave per SIMD), 1 KiB per wave per load.
.include "common.inc"

// Each wave issues `loads` global_load_dwordx4 in groups of 16, keeping at most 32 in flight
// (s_waitcnt vmcnt(16) after each group: the hardware counter holds 63); the groups write
// v[4:67] and v[68:131] in turn, so no load overwrites one still in flight. `stride` bytes
// between one load of the workgroup and the next: 4096 streams through fresh lines (workgroup
// g from byte loads * 4 KiB * g on), 0 re-reads the same 4 KiB (L2 hits after the first).
.macro READS name, loads, stride
KERNEL_BEGIN \name
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  v_lshlrev_b32 v2, 4, v0
  .if \stride
    s_mul_i32 s3, s2, \loads * \stride
    v_add_u32 v2, s3, v2
  .endif
  s_waitcnt lgkmcnt(0)
  .set group, 0
  .rept \loads / 16
    .set reg, 4 + 64 * (group % 2)
    .rept 16
      global_load_dwordx4 v[reg:reg+3], v2, s[22:23]
      .set reg, reg + 4
      .if \stride
        v_add_u32 v2, \stride, v2
      .endif
    .endr
    s_waitcnt vmcnt(16)
    .set group, group + 1
  .endr
  s_waitcnt vmcnt(0)
KERNEL_END \name, 136
.endm
READS k_stream_32, 32, 4096
READS k_stream_64, 64, 4096
READS k_reread_64, 64, 0
READS k_reread_128, 128, 0

// A copy: workgroup g copies bytes [16 KiB g, 16 KiB (g + 1)) of in to out, four loads of
// 16 bytes per work-item, then four stores.
KERNEL_BEGIN k_copy
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_lshl_b32 s3, s2, 14
  v_lshlrev_b32 v2, 4, v0
  v_add_u32 v2, s3, v2
  v_add_u32 v3, 0x1000, v2
  v_add_u32 v20, 0x2000, v2
  v_add_u32 v21, 0x3000, v2
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[4:7], v2, s[22:23]
  global_load_dwordx4 v[8:11], v3, s[22:23]
  global_load_dwordx4 v[12:15], v20, s[22:23]
  global_load_dwordx4 v[16:19], v21, s[22:23]
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v2, v[4:7], s[20:21]
  global_store_dwordx4 v3, v[8:11], s[20:21]
  global_store_dwordx4 v20, v[12:15], s[20:21]
  global_store_dwordx4 v21, v[16:19], s[20:21]
  s_waitcnt vmcnt(0)
KERNEL_END k_copy, 32
