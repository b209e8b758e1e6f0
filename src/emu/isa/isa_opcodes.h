// Mnemonic tables of the gfx950 instruction encodings, indexed by each encoding's opcode field.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zyfa::emu {

struct OpcodeName {
  uint16_t op;
  const char* name;  // as llvm-objdump prints it
};

#define ZYFA_EMU_OPCODE_TABLE(E)                                     \
  extern const OpcodeName k##E##Opcodes[];                           \
  extern const size_t k##E##OpcodesCount;
ZYFA_EMU_OPCODE_TABLE(Sop2)
ZYFA_EMU_OPCODE_TABLE(Sopk)
ZYFA_EMU_OPCODE_TABLE(Sop1)
ZYFA_EMU_OPCODE_TABLE(Sopc)
ZYFA_EMU_OPCODE_TABLE(Sopp)
ZYFA_EMU_OPCODE_TABLE(Smem)
ZYFA_EMU_OPCODE_TABLE(Vop2)
ZYFA_EMU_OPCODE_TABLE(Vop1)
ZYFA_EMU_OPCODE_TABLE(Vopc)
ZYFA_EMU_OPCODE_TABLE(Vop3)
ZYFA_EMU_OPCODE_TABLE(Vop3p)
ZYFA_EMU_OPCODE_TABLE(Ds)
ZYFA_EMU_OPCODE_TABLE(Mubuf)
ZYFA_EMU_OPCODE_TABLE(Flat)
ZYFA_EMU_OPCODE_TABLE(Scratch)
ZYFA_EMU_OPCODE_TABLE(Global)
#undef ZYFA_EMU_OPCODE_TABLE

}  // namespace zyfa::emu
