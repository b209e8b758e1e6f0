// Wait-state rules that the hardware rule set relaxes (test_emu_rule_sets.cpp): each kernel
// gives fewer wait states than LLVM's hazard recognizer asks for, as AMD's shipped gfx950
// kernels (AITER fmha_v3_fwd) do, or fewer still.
.include "common.inc"
.include "load_to_lds.inc"

// k_load_to_lds (memory.s) without its s_nop: loads to LDS right after the SALU write of M0
// (LLVM: 1 wait state; AITER gives 0).
KERNEL_FROM k_m0_lds_dma_no_wait, LOAD_TO_LDS, 0, 64, 0, 1280

// A VALU reads VCC one wait state after a VALU wrote it (LLVM: 2; AITER gives 1): lanes
// below 10 store 1, the others 0.
KERNEL_BEGIN k_vcc_read_one_wait
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_cmp_gt_u32 vcc, 10, v0
  s_nop 0
  v_cndmask_b32 v5, 0, 1, vcc
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v5
  s_waitcnt vmcnt(0)
KERNEL_END k_vcc_read_one_wait

// The same with no wait state at all: fewer than AMD's code gives, a fault under both sets.
KERNEL_BEGIN k_vcc_read_no_wait
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_cmp_gt_u32 vcc, 10, v0
  v_cndmask_b32 v5, 0, 1, vcc
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v5
  s_waitcnt vmcnt(0)
KERNEL_END k_vcc_read_no_wait

// v_permlane16_swap one wait state after a v_permlane32_swap that wrote both its operands
// (LLVM: 2 after any VALU write; AITER gives 1 after a swap), and the same with LLVM's count.
.macro SWAP_AFTER_SWAP name, nops
KERNEL_BEGIN \name
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_mov_b32 v2, v0
  v_add_u32 v3, 100, v0
  s_nop 1
  v_permlane32_swap_b32 v2, v3
  s_nop \nops
  v_permlane16_swap_b32 v2, v3
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v2
  STORE_V 1, v3
  s_waitcnt vmcnt(0)
KERNEL_END \name
.endm
SWAP_AFTER_SWAP k_swap_after_swap_one_wait, 0
SWAP_AFTER_SWAP k_swap_after_swap_two_waits, 1

// A swap one wait state after an ordinary VALU write of its source: a fault under both sets.
KERNEL_BEGIN k_swap_after_valu_one_wait
  v_mov_b32 v2, v0
  v_add_u32 v3, 100, v0
  s_nop 0
  v_permlane16_swap_b32 v2, v3
KERNEL_END k_swap_after_valu_one_wait

// A load to LDS into bytes another wave reads in the same barrier interval, what AMD's
// attention kernels do at a tile's end (docs/emulator.md, "LDS order by timing"). Two waves:
// each writes its work-item ids to its own slot (LDS[4 id]), barrier; wave 0 then reads wave
// 1's slot, and wave 1 overwrites that slot with in[0..63] by a load to LDS and reads it back.
// No barrier orders wave 0's read before the load: under strict an LDS race; on the hardware
// the load's round trip does, so wave 0 reads wave 1's ids: out[16 t] = t + 64 for wave 0,
// in[t - 64] for wave 1.
KERNEL_BEGIN k_dma_after_read
  LOAD_OUT
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  v_lshlrev_b32 v1, 2, v0                 // own slot: 4 id
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_readfirstlane_b32 s3, v0
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc0 1f
  v_add_u32 v2, 0x100, v1                 // wave 1's slot
  ds_read_b32 v3, v2
  s_waitcnt lgkmcnt(0)
  s_branch 2f
1:
  v_and_b32 v4, 63, v0
  v_lshlrev_b32 v4, 2, v4                 // 4 lane: in[lane]
  s_mov_b32 m0, 0x100
  s_nop 0
  global_load_lds_dword v4, s[22:23]
  s_waitcnt vmcnt(0)
  ds_read_b32 v3, v1
  s_waitcnt lgkmcnt(0)
2:
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
KERNEL_END k_dma_after_read, 64, 0, 512

// Two waves' loads to LDS into the same bytes, issued together after a barrier: which lands
// last depends on timing that nothing bounds, a race under both rule sets (under hardware the
// replay finds the two returns closer than the margin the rule asks for).
KERNEL_BEGIN k_dma_same_bytes
  LOAD_OUT
  s_load_dwordx2 s[22:23], s[0:1], 0x8
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_lshlrev_b32 v4, 2, v0                 // 4 id: in[id]
  v_and_b32 v1, 63, v0
  v_lshlrev_b32 v1, 2, v1                 // 4 lane
  s_mov_b32 m0, 0
  s_nop 0
  global_load_lds_dword v4, s[22:23]
  s_waitcnt vmcnt(0)
  s_barrier
  ds_read_b32 v3, v1
  s_waitcnt lgkmcnt(0)
  STORE_V 0, v3
  s_waitcnt vmcnt(0)
KERNEL_END k_dma_same_bytes, 64, 0, 512
