// What the cycle model needs to know about one instruction, decided once per program counter
// from the decoded instruction (its encoding, mnemonic and immediates).
#pragma once

#include <cstdint>

#include "emu/core/instruction.h"

namespace zyfa::emu::timing {

enum class Kind : uint8_t {
  kSalu, kSmem, kBranch, kValu, kTrans, kMfma, kLds, kVmemLoad, kVmemStore, kVmemToLds,
  kWaitcnt, kNop, kBarrier, kSetprio, kSleep, kEndpgm, kInternal,
};

// The issue categories of a CDNA SIMD slot: at most one instruction of each per slot, each
// from a different wave (rocprofiler-compute, pipeline-descriptions).
enum class Category : uint8_t { kValu, kSalu, kVmem, kLds, kBranch, kNone };

struct InstInfo {
  Kind kind = Kind::kInternal;
  Category category = Category::kNone;
  uint8_t passes = 0;        // MFMA
  uint8_t valu_cycles = 0;   // VALU pipe occupancy (MFMA: the issue)
  uint16_t vmcnt = 63, lgkmcnt = 15;  // s_waitcnt
  uint16_t imm = 0;          // s_nop N, s_setprio N, s_sleep N
  uint8_t size = 4;          // bytes (a taken branch is a next pc other than pc + size)
};

InstInfo classify(const Instruction& in);

}  // namespace zyfa::emu::timing
