// Initial wave state (test_emu_dispatch.cpp): dispatch pointer and kernarg pointer in user
// SGPRs, workgroup ids x/y/z in system SGPRs, work-item ids packed in v0 (gfx90a and later).
.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
.amdhsa_code_object_version 5

.text
.p2align 8
.globl k_dispatch
.type k_dispatch,@function
k_dispatch:
  // s[0:1] dispatch packet, s[2:3] kernel arguments, s4/s5/s6 workgroup id x/y/z
  s_load_dwordx2 s[20:21], s[2:3], 0x0
  s_load_dword s8, s[0:1], 0x4            // workgroup_size_x | workgroup_size_y << 16
  s_load_dword s9, s[0:1], 0xc            // grid_size_x (work-items)
  // linear work-item id from the packed v0: x + 8 * (y + 4 * z)
  v_and_b32 v1, 0x3ff, v0
  v_bfe_u32 v2, v0, 10, 10
  v_bfe_u32 v3, v0, 20, 10
  v_lshl_add_u32 v4, v3, 2, v2
  v_lshl_add_u32 v4, v4, 3, v1
  // linear workgroup id: x + 2 * (y + 3 * z)
  s_mul_i32 s10, s6, 3
  s_add_u32 s10, s10, s5
  s_lshl_b32 s10, s10, 1
  s_add_u32 s10, s10, s4
  s_lshl_b32 s11, s10, 6
  v_add_u32 v5, s11, v4                   // global linear index
  v_lshlrev_b32 v5, 4, v5                 // 16 bytes per work-item
  s_lshl_b32 s12, s5, 8
  s_or_b32 s12, s12, s4
  s_lshl_b32 s13, s6, 16
  s_or_b32 s12, s12, s13
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v6, s12
  v_mov_b32 v7, s8
  v_mov_b32 v8, s9
  global_store_dword v5, v6, s[20:21]
  global_store_dword v5, v0, s[20:21] offset:4
  global_store_dword v5, v7, s[20:21] offset:8
  global_store_dword v5, v8, s[20:21] offset:12
  s_waitcnt vmcnt(0)
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel k_dispatch
  .amdhsa_user_sgpr_dispatch_ptr 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 16
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 1
  .amdhsa_system_sgpr_workgroup_id_z 1
  .amdhsa_system_vgpr_workitem_id 2
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 16
.end_amdhsa_kernel

// A kernel that asks for a private (scratch) segment: the emulator refuses to run it.
.text
.p2align 8
.globl k_scratch
.type k_scratch,@function
k_scratch:
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel k_scratch
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_private_segment_fixed_size 64
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 8
.end_amdhsa_kernel
