// Binary decoding of gfx950 machine code into Instructions (once per code object).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "emu/core/instruction.h"

namespace zyfa::emu {

// Decodes the instruction at `pc` (byte offset into `code`). Unknown opcodes or truncated
// instructions decode as Encoding::kInvalid with size 4 and name "<invalid>"; execution of
// such an instruction is a kernel fault, disassembly just shows it.
Instruction decode_instruction(const uint8_t* code, size_t code_size, uint32_t pc);

// Decodes a whole code range linearly (text section or one kernel).
std::vector<Instruction> decode_range(const uint8_t* code, size_t code_size, uint32_t begin,
                                      uint32_t end);

// Mnemonic of an opcode in an encoding, or nullptr when the opcode does not exist.
const char* opcode_mnemonic(Encoding enc, unsigned op, uint8_t flat_seg = 2);

}  // namespace zyfa::emu
