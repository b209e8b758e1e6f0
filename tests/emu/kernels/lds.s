// LDS across the waves of a workgroup (256 work-items): every work-item writes its id, the
// workgroup synchronizes, each reads the id written 64 work-items further on.
.include "common.inc"

// LDS[v1] = \value, waited for; out[lane] = v3.
.macro WRITE_AND_STORE_V3 value
  ds_write_b32 v1, \value
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
.endm

// out[lane] = the dword at LDS[4 * ((id + 64) mod 256)]: the id the work-item 64 further on
// (in the next wave) wrote.
.macro STORE_NEXT_WAVE_ID
  v_add_u32 v2, 64, v0
  v_and_b32 v2, 0xff, v2
  v_lshlrev_b32 v2, 2, v2
  ds_read_b32 v3, v2
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
.endm

.macro EXCHANGE wait_before_barrier
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  ds_write_b32 v1, v0
  .if \wait_before_barrier
  s_waitcnt lgkmcnt(0)
  .endif
  s_barrier
  .if !\wait_before_barrier
  s_waitcnt lgkmcnt(0)
  .endif
  STORE_NEXT_WAVE_ID
.endm

KERNEL_FROM k_lds_exchange, EXCHANGE, 1, 64, 0, 1024

// The write is only waited for after the barrier: other waves may read before it lands.
KERNEL_FROM k_lds_exchange_late_wait, EXCHANGE, 0, 64, 0, 1024

// Global memory: every work-item stores its id at out[4096 + id] (past the per-lane result
// rows), the workgroup synchronizes, each loads the id 64 work-items further on.
.macro GLOBAL_EXCHANGE wait_before_barrier
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  v_add_u32 v1, 16384, v1
  global_store_dword v1, v0, s[20:21]
  .if \wait_before_barrier
  s_waitcnt vmcnt(0)
  .endif
  s_barrier
  v_add_u32 v2, 64, v0
  v_and_b32 v2, 0xff, v2
  v_lshlrev_b32 v2, 2, v2
  v_add_u32 v2, 16384, v2
  global_load_dword v3, v2, s[20:21]
  s_waitcnt vmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
.endm

KERNEL_FROM k_global_exchange, GLOBAL_EXCHANGE, 1

KERNEL_FROM k_global_exchange_late_wait, GLOBAL_EXCHANGE, 0

// Each work-item writes its id to LDS, passes a barrier without waiting, reads back its own
// slot (ordered by the LDS queue of its wave) and stores it.
KERNEL_BEGIN k_lds_own_readback
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  ds_write_b32 v1, v0
  s_barrier
  ds_read_b32 v3, v1
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
KERNEL_END k_lds_own_readback, 64, 0, 1024

// Write-after-read across a barrier: each work-item reads the slot of the work-item 64 further
// on, passes a barrier (waiting for the read or not), then overwrites its own slot.
.macro WAR_EXCHANGE wait_before_barrier
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_u32 v2, 64, v0
  v_and_b32 v2, 0xff, v2
  v_lshlrev_b32 v2, 2, v2
  ds_read_b32 v3, v2
  .if \wait_before_barrier
  s_waitcnt lgkmcnt(0)
  .endif
  s_barrier
  v_add_u32 v4, 1000, v0
  WRITE_AND_STORE_V3 v4
.endm

KERNEL_FROM k_lds_war, WAR_EXCHANGE, 1, 64, 0, 1024

KERNEL_FROM k_lds_war_late_wait, WAR_EXCHANGE, 0, 64, 0, 1024

// Races: accesses of different waves to the same LDS bytes with no s_barrier between them,
// one of them a write (lds_race.cpp). Each work-item writes its id, waits for its own write
// and reads the id written 64 work-items further on, i.e. by the next wave: no barrier.
KERNEL_BEGIN k_lds_race_raw
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  STORE_NEXT_WAVE_ID
KERNEL_END k_lds_race_raw, 64, 0, 1024

// Every wave writes the same 64 dwords (work-item id mod 64): a write-write race.
KERNEL_BEGIN k_lds_race_waw
  v_and_b32 v1, 63, v0
  v_lshlrev_b32 v1, 2, v1
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
KERNEL_END k_lds_race_waw, 64, 0, 1024

// Wave w writes byte w of dword 0 (no race between the writes), then every wave reads the
// whole dword with no barrier: the read races with the other waves' byte writes, whichever
// order the waves run in (byte tags against a whole-dword access, both ways).
KERNEL_BEGIN k_lds_race_bytes
  v_lshrrev_b32 v1, 6, v0
  v_mov_b32 v4, 0x40
  ds_write_b8 v1, v4 offset:0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v5, 0
  ds_read_b32 v6, v5
  s_waitcnt lgkmcnt(0)
KERNEL_END k_lds_race_bytes, 64, 0, 1024

// Each wave reads the next wave's slot before a barrier, and after it every wave writes its
// own slot: correct (the barrier orders the reads before the writes). Without the barrier
// the write of one wave races with the read of another (k_lds_race_war).
.macro READ_THEN_WRITE barrier
  LOAD_OUT
  v_lshlrev_b32 v1, 2, v0
  v_add_u32 v2, 64, v0
  v_and_b32 v2, 0xff, v2
  v_lshlrev_b32 v2, 2, v2
  ds_read_b32 v3, v2
  s_waitcnt lgkmcnt(0)
  .if \barrier
  s_barrier
  .endif
  WRITE_AND_STORE_V3 v0
.endm
KERNEL_FROM k_lds_read_barrier_write, READ_THEN_WRITE, 1, 64, 0, 1024
KERNEL_FROM k_lds_race_war, READ_THEN_WRITE, 0, 64, 0, 1024

// Wave w writes byte w of dword 0 (different bytes of one dword: no race), and every wave
// reads the same initialized table (reads never race); after a barrier each reads dword 0.
KERNEL_BEGIN k_lds_bytes_no_race
  LOAD_OUT
  v_lshrrev_b32 v1, 6, v0
  v_mov_b32 v4, 0x40
  ds_write_b8 v1, v4 offset:0
  v_mov_b32 v5, 0
  ds_read_b32 v6, v5 offset:64
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v3, v5
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
KERNEL_END k_lds_bytes_no_race, 64, 0, 1024
