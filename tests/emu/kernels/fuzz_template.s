// The code object the emulator fuzzer (tests/emu/fuzz) patches: its text (64 s_nop, then
// s_endpgm) is overwritten with the fuzz input's instruction words and its kernel descriptor
// with the input's register counts, SGPR enables and LDS size. The LDS size 0x1234 marks the
// descriptor in the file.
.include "common.inc"

KERNEL_BEGIN k_fuzz
  .rept 64
  s_nop 0
  .endr
KERNEL_END k_fuzz, 64, 0, 0x1234
