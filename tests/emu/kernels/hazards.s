// MFMA dependency wait states (gfx950, LLVM GCNHazardRecognizer.cpp): each hazard
// as a pair of kernels, one with exactly the required wait states and one with one fewer.
.include "common.inc"

// v[2:5] = A (bf16 1.0 pairs), v[6:9] = B (same); 16x16x32 bf16 is 4 passes, 32x32x16 is 8.
.macro SETUP_AB
  s_load_dwordx2 s[20:21], s[0:1], 0x0
  SETUP_LANE_ADDR
  v_mov_b32 v2, 0x3f803f80
  v_mov_b32 v3, 0x3f803f80
  v_mov_b32 v4, 0x3f803f80
  v_mov_b32 v5, 0x3f803f80
  v_mov_b32 v6, 0x3f803f80
  v_mov_b32 v7, 0x3f803f80
  v_mov_b32 v8, 0x3f803f80
  v_mov_b32 v9, 0x3f803f80
  s_waitcnt lgkmcnt(0)
  s_nop 4
.endm

// v[12:15] = 0 (VALU-written, with the 2 wait states an MFMA read needs), then a 4-pass MFMA
// in flight that reads them as SrcC.
.macro MFMA_SRCC_ZERO
  v_mov_b32 v12, 0
  v_mov_b32 v13, 0
  v_mov_b32 v14, 0
  v_mov_b32 v15, 0
  s_nop 1
  v_mfma_f32_16x16x32_bf16 v[20:23], v[2:5], v[6:9], v[12:15]
.endm

// MFMA result read by v_accvgpr_read: 4 passes need 8 wait states.
.macro MFMA4_READ nops
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 a[0:3], v[2:5], v[6:9], 0
  s_nop \nops
  v_accvgpr_read_b32 v10, a0
  STORE_V 0, v10
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_mfma4_read, MFMA4_READ, 7, 6, 64, 16

// 8 passes (32x32x16 bf16) need 12 wait states (s_nop 7 + s_nop 3 = 12).
.macro MFMA8_READ last_nop
  SETUP_AB
  v_mfma_f32_32x32x16_bf16 a[0:15], v[2:5], v[6:9], 0
  s_nop 7
  s_nop \last_nop
  v_accvgpr_read_b32 v10, a15
  STORE_V 0, v10
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_mfma8_read, MFMA8_READ, 3, 2, 64, 16

// Accumulation chain on the same SrcC: no wait states needed; result 32 + 32 = 64.
KERNEL_BEGIN k_mfma_chain
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 a[0:3], v[2:5], v[6:9], 0
  v_mfma_f32_16x16x32_bf16 a[0:3], v[2:5], v[6:9], a[0:3]
  s_nop 7
  v_accvgpr_read_b32 v10, a3
  STORE_V 0, v10
  s_waitcnt vmcnt(0)
KERNEL_END k_mfma_chain, 64, 16

// SrcC overlapping, not the same registers: 4 passes need 6 wait states.
.macro MFMA_OVERLAP n
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 a[0:3], v[2:5], v[6:9], 0
  s_nop \n
  v_mfma_f32_16x16x32_bf16 a[4:7], v[2:5], v[6:9], a[2:5]
  s_nop 7
.endm
OK_AND_SHORT k_mfma_overlap, MFMA_OVERLAP, 5, 4, 64, 16

// VALU writes a VGPR, then an MFMA reads it: 2 wait states.
.macro VALU_MFMA n
  SETUP_AB
  v_mov_b32 v9, 0x3f803f80
  s_nop \n
  v_mfma_f32_16x16x32_bf16 a[0:3], v[2:5], v[6:9], 0
  s_nop 7
.endm
OK_AND_SHORT k_valu_mfma, VALU_MFMA, 1, 0, 64, 16

// VALU overwrites a VGPR an in-flight 4-pass MFMA reads as SrcC: 3 wait states (WAR).
.macro VALU_WAR n
  SETUP_AB
  MFMA_SRCC_ZERO
  s_nop \n
  v_mov_b32 v12, 1
  s_nop 7
.endm
OK_AND_SHORT k_valu_war, VALU_WAR, 2, 1, 64, 0

// A VMEM store of an MFMA result (VGPR destination): 8 wait states for 4 passes.
.macro MFMA_STORE n
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 v[20:23], v[2:5], v[6:9], 0
  s_nop \n
  STORE_V 0, v20
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_mfma_store, MFMA_STORE, 7, 6, 64, 0

// MFMA result read as SrcA by the next MFMA: 8 wait states for 4 passes.
.macro MFMA_SRCA nops
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 v[20:23], v[2:5], v[6:9], 0
  s_nop \nops
  v_mfma_f32_16x16x32_bf16 a[0:3], v[20:23], v[6:9], 0
  s_nop 7
.endm
OK_AND_SHORT k_mfma_srca, MFMA_SRCA, 7, 6, 64, 16

// VALU overwrites an MFMA result (WAW): 8 wait states for 4 passes.
.macro MFMA_WAW nops
  SETUP_AB
  v_mfma_f32_16x16x32_bf16 v[20:23], v[2:5], v[6:9], 0
  s_nop \nops
  v_mov_b32 v21, 0
  s_nop 7
.endm
OK_AND_SHORT k_mfma_waw, MFMA_WAW, 7, 6, 64, 0

// An LDS access `\op \a, \b` \nops wait states after a 4-pass MFMA that writes \dst.
.macro MFMA_THEN_DS dst, op, a, b, nops
  SETUP_AB
  v_mov_b32 v30, 0
  v_mfma_f32_16x16x32_bf16 \dst, v[2:5], v[6:9], 0
  s_nop \nops
  \op \a, \b
  s_waitcnt lgkmcnt(0)
.endm

// LDS write of an MFMA result: 8 wait states for 4 passes.
.macro MFMA_DS nops
  MFMA_THEN_DS v[20:23], ds_write_b32, v30, v22, \nops
.endm
OK_AND_SHORT k_mfma_ds, MFMA_DS, 7, 6, 64, 0, 64

// LDS write whose data an MFMA writes into AGPRs: the same 8 wait states for 4 passes
// (LLVM checkMAIVALUHazards counts VMEM/DS data reads of AGPRs too).
.macro MFMA_DS_AGPR nops
  MFMA_THEN_DS a[0:3], ds_write_b32, v30, a2, \nops
.endm
OK_AND_SHORT k_mfma_ds_agpr, MFMA_DS_AGPR, 7, 6, 64, 4, 64

// 16-pass scaled FP8 MFMA (32x32x64 f8f6f4, e4m3 operands) read by v_accvgpr_read: 20.
.macro MFMA16_READ last_nop
  SETUP_AB
  v_mov_b32 v10, 0x38383838
  v_mov_b32 v11, 0x38383838
  v_mov_b32 v12, 0x38383838
  v_mov_b32 v13, 0x38383838
  v_mov_b32 v14, 0x38383838
  v_mov_b32 v15, 0x38383838
  v_mov_b32 v16, 0x38383838
  v_mov_b32 v17, 0x38383838
  v_mov_b32 v18, 127
  s_nop 1
  v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15], v[10:17], v[10:17], 0, v18, v18
  s_nop 7
  s_nop 7
  s_nop \last_nop
  v_accvgpr_read_b32 v19, a0
  STORE_V 0, v19
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_mfma16_read, MFMA16_READ, 3, 2, 64, 16

// Loads into registers of an MFMA (GCNHazardRecognizer checkMAIVALUHazards counts VMEM/DS
// definitions like VALU ones). LDS load overwriting a 4-pass result (WAW): 8 wait states.
.macro MFMA_DS_LOAD_WAW nops
  MFMA_THEN_DS v[20:23], ds_read_b32, v22, v30, \nops
.endm
OK_AND_SHORT k_ds_load_waw, MFMA_DS_LOAD_WAW, 7, 6, 64, 0, 64

// Global load into an AGPR an 8-pass MFMA writes (WAW): 12 wait states.
.macro MFMA_VMEM_LOAD_WAW last_nop
  SETUP_AB
  v_mfma_f32_32x32x16_bf16 a[0:15], v[2:5], v[6:9], 0
  s_nop 7
  s_nop \last_nop
  global_load_dword a15, v61, s[20:21]
  s_waitcnt vmcnt(0)
.endm
OK_AND_SHORT k_vmem_load_waw, MFMA_VMEM_LOAD_WAW, 3, 2, 64, 16

// LDS load into a register a 4-pass MFMA reads as SrcC (WAR): 3 wait states.
.macro MFMA_DS_LOAD_WAR nops
  SETUP_AB
  v_mov_b32 v30, 0
  MFMA_SRCC_ZERO
  s_nop \nops
  ds_read_b32 v13, v30
  s_waitcnt lgkmcnt(0)
  s_nop 7
.endm
OK_AND_SHORT k_ds_load_war, MFMA_DS_LOAD_WAR, 2, 1, 64, 0, 64

// Global load into a register an 8-pass MFMA reads as SrcC (WAR): 7 wait states.
.macro MFMA_VMEM_LOAD_WAR nops
  SETUP_AB
  .irp r, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51
    v_mov_b32 v\r, 0
  .endr
  s_nop 1
  v_mfma_f32_32x32x16_bf16 v[20:35], v[2:5], v[6:9], v[36:51]
  s_nop \nops
  global_load_dword v40, v61, s[20:21]
  s_waitcnt vmcnt(0)
  s_nop 7
  s_nop 7
.endm
OK_AND_SHORT k_vmem_load_war, MFMA_VMEM_LOAD_WAR, 6, 5, 64, 0
