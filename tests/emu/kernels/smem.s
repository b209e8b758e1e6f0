// Scalar memory (test_emu_ds.cpp): immediate and SGPR offsets, s_buffer_load range checks.
.include "common.inc"

KERNEL_BEGIN k_smem
  s_load_dwordx4 s[20:23], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 exec, 1
  s_load_dwordx4 s[4:7], s[22:23], 0x4
  s_mov_b32 s8, 8
  s_load_dword s9, s[22:23], s8
  // Raw buffer resource over `in` with num_records = 12 bytes.
  s_mov_b32 s12, s22
  s_and_b32 s13, s23, 0xffff
  s_mov_b32 s14, 12
  s_mov_b32 s15, 0x20000
  s_buffer_load_dwordx2 s[10:11], s[12:15], 0x8
  s_waitcnt lgkmcnt(0)
  STORE_S 0, s4
  STORE_S 1, s7
  STORE_S 2, s9
  STORE_S 3, s10
  STORE_S 4, s11
  s_waitcnt vmcnt(0)
KERNEL_END k_smem
