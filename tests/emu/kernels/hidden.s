// Hidden kernel arguments (code object v5 metadata): the emulator appends block counts and
// group sizes after the explicit arguments as the HIP runtime does (test_emu_dispatch.cpp).
.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
.amdhsa_code_object_version 5

.text
.p2align 8
.globl k_hidden
.type k_hidden,@function
k_hidden:
  s_load_dwordx2 s[20:21], s[0:1], 0x0       // out
  s_load_dwordx2 s[4:5], s[0:1], 0x8         // hidden_block_count_x, _y
  s_load_dword s6, s[0:1], 0x14              // hidden_group_size_x (u16) | _y (u16)
  s_mov_b64 exec, 1
  v_mov_b32 v1, 0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v2, s4
  v_mov_b32 v3, s5
  v_mov_b32 v4, s6
  global_store_dword v1, v2, s[20:21]
  global_store_dword v1, v3, s[20:21] offset:4
  global_store_dword v1, v4, s[20:21] offset:8
  s_waitcnt vmcnt(0)
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel k_hidden
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 32
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: k_hidden
    .symbol: k_hidden.kd
    .kernarg_segment_size: 32
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 24
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global, .name: out }
      - { .offset: 8, .size: 4, .value_kind: hidden_block_count_x }
      - { .offset: 12, .size: 4, .value_kind: hidden_block_count_y }
      - { .offset: 16, .size: 4, .value_kind: hidden_block_count_z }
      - { .offset: 20, .size: 2, .value_kind: hidden_group_size_x }
      - { .offset: 22, .size: 2, .value_kind: hidden_group_size_y }
      - { .offset: 24, .size: 2, .value_kind: hidden_group_size_z }
...
.end_amdgpu_metadata
