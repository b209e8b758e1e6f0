// s_waitcnt: loads land late; a register read before the wait that covers its load is a
// fault (test_emu_waitcnt.cpp). in[lane] = lane * 3.
.include "common.inc"

.macro LOAD_ARGS
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
.endm

KERNEL_BEGIN k_vm_wait
  LOAD_ARGS
  global_load_dword v2, v1, s[22:23]
  global_load_dword v3, v1, s[22:23] offset:4
  s_waitcnt vmcnt(0)
  v_add_u32 v4, v2, v3
  STORE_V 0, v4
  s_waitcnt vmcnt(0)
KERNEL_END k_vm_wait

KERNEL_BEGIN k_vm_nowait
  LOAD_ARGS
  global_load_dword v2, v1, s[22:23]
  v_add_u32 v4, v2, 1
  STORE_V 0, v4
  s_waitcnt vmcnt(0)
KERNEL_END k_vm_nowait

// vmcnt(1) guarantees the older of two loads only: _ok uses the older (v2), _bad the
// younger (v3).
.macro VM_PARTIAL used
  LOAD_ARGS
  global_load_dword v2, v1, s[22:23]
  global_load_dword v3, v1, s[22:23] offset:4
  s_waitcnt vmcnt(1)
  v_add_u32 v4, \used, 1
  STORE_V 0, v4
  s_waitcnt vmcnt(0)
.endm
KERNEL_FROM k_vm_partial_ok, VM_PARTIAL, v2
KERNEL_FROM k_vm_partial_bad, VM_PARTIAL, v3

// Overwriting the destination of a load in flight.
KERNEL_BEGIN k_vm_overwrite
  LOAD_ARGS
  global_load_dword v2, v1, s[22:23]
  v_mov_b32 v2, 0
  s_waitcnt vmcnt(0)
KERNEL_END k_vm_overwrite

KERNEL_BEGIN k_smem_nowait
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_add_u32 s4, s20, 4
  s_waitcnt lgkmcnt(0)
KERNEL_END k_smem_nowait

KERNEL_BEGIN k_lds_nowait
  LOAD_ARGS
  v_mov_b32 v5, 7
  ds_write_b32 v1, v5
  ds_read_b32 v6, v1
  v_add_u32 v6, v6, 1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_lds_nowait, 64, 0, 256

// Same-wave LDS write then read, waited: in order, so the read sees the write.
KERNEL_BEGIN k_lds_wait
  LOAD_ARGS
  v_mov_b32 v5, 7
  ds_write_b32 v1, v5
  ds_read_b32 v6, v1
  s_waitcnt lgkmcnt(0)
  v_add_u32 v6, v6, v0
  STORE_V 0, v6
  s_waitcnt vmcnt(0)
KERNEL_END k_lds_wait, 64, 0, 256

// SMEM returns in any order: after lgkmcnt(1) with two scalar loads outstanding either may
// still be in flight, so the first one's result is not guaranteed (test_emu_waitcnt.cpp).
KERNEL_BEGIN k_smem_two_partial
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  s_waitcnt lgkmcnt(1)
  s_add_u32 s4, s20, 4
  s_waitcnt lgkmcnt(0)
KERNEL_END k_smem_two_partial

KERNEL_BEGIN k_smem_two_full
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  s_waitcnt lgkmcnt(0)
  s_add_u32 s4, s20, 4
  s_add_u32 s5, s22, 4
KERNEL_END k_smem_two_full

// An LDS read, then a scalar load: lgkmcnt(1) may be satisfied by either returning first.
KERNEL_BEGIN k_lds_then_smem_partial
  LOAD_ARGS
  ds_read_b32 v6, v1
  s_load_dwordx2 s[24:25], s[0:1], 0x8
  s_waitcnt lgkmcnt(1)
  v_add_u32 v7, v6, 1
  s_waitcnt lgkmcnt(0)
KERNEL_END k_lds_then_smem_partial, 64, 0, 256

// Two LDS reads around a scalar load: lgkmcnt(1) leaves at most the younger LDS read or the
// scalar load outstanding, so the older LDS read has returned whatever the order.
KERNEL_BEGIN k_lds_smem_lds_older_ok
  LOAD_ARGS
  v_mov_b32 v5, 7
  ds_write_b32 v1, v5
  ds_read_b32 v6, v1
  s_load_dwordx2 s[24:25], s[0:1], 0x8
  ds_read_b32 v8, v1
  s_waitcnt lgkmcnt(1)
  v_add_u32 v7, v6, v0
  STORE_V 0, v7
  s_waitcnt vmcnt(0) lgkmcnt(0)
KERNEL_END k_lds_smem_lds_older_ok, 64, 0, 256
