// One decoded gfx950 instruction: the encoding's fields unpacked once per code object, so the
// executor never looks at instruction bits again.
#pragma once

#include <cstdint>

namespace zyfa::emu {

enum class Encoding : uint8_t {
  kInvalid, kSop2, kSopk, kSop1, kSopc, kSopp, kSmem, kVop2, kVop1, kVopc, kVop3, kVop3p,
  kDs, kMubuf, kFlat,
};
const char* encoding_name(Encoding e);

// Source operand codes (9 bits, gfx9): 0-101 SGPR, 106/107 VCC, 124 M0, 126/127 EXEC,
// 128-208 inline integers, 240-248 inline floats, 249 SDWA, 250 DPP, 251 VCCZ, 252 EXECZ,
// 253 SCC, 255 literal, 256-511 VGPR.
namespace operand {
constexpr uint16_t kVccLo = 106, kVccHi = 107, kM0 = 124, kExecLo = 126, kExecHi = 127;
constexpr uint16_t kZero = 128, kSdwa = 249, kDpp = 250, kVccz = 251, kExecz = 252, kScc = 253;
constexpr uint16_t kLiteral = 255, kVgpr0 = 256;
constexpr uint16_t kNone = 0xFFFF;
}  // namespace operand

struct Sdwa {
  uint8_t dst_sel = 6, dst_unused = 0, src0_sel = 6, src1_sel = 6;  // 6 = DWORD
  bool clamp = false, src0_sext = false, src1_sext = false;
  bool src0_neg = false, src0_abs = false, src1_neg = false, src1_abs = false;
  bool src0_sgpr = false, src1_sgpr = false;
  uint8_t omod = 0;
  bool sdst_vcc = true;   // VOPC SDWA: result to VCC unless sdst given
  uint8_t sdst = 0;
};

struct Dpp {
  uint16_t ctrl = 0;
  bool bound_ctrl = false, src0_neg = false, src0_abs = false, src1_neg = false, src1_abs = false;
  uint8_t bank_mask = 0xF, row_mask = 0xF;
};

// The counts of an s_waitcnt's simm16: vmcnt in bits [3:0] and [15:14], lgkmcnt in [11:8]
// (CDNA4 ISA, S_WAITCNT).
inline uint32_t waitcnt_vmcnt(int32_t simm16) {
  const uint32_t s = uint32_t(simm16) & 0xFFFF;
  return (s & 0xF) | (((s >> 14) & 3) << 4);
}
inline uint32_t waitcnt_lgkmcnt(int32_t simm16) { return (uint32_t(simm16) >> 8) & 0xF; }

struct Instruction {
  Encoding enc = Encoding::kInvalid;
  uint8_t size = 4;          // bytes, including a literal or a second dword
  uint16_t op = 0;           // opcode in the encoding's own numbering
  uint16_t valu = 0;         // VOP1/2/C/3: the VOP3 numbering (op::Valu)
  const char* name = "";     // mnemonic as llvm-objdump prints it
  uint32_t pc = 0;           // byte offset in the code section
  uint32_t word0 = 0, word1 = 0;

  // Operands (codes as above; VGPR numbers are 256 + n).
  uint16_t src[3] = {operand::kNone, operand::kNone, operand::kNone};
  uint16_t dst = operand::kNone;  // VGPR (256+n) or SGPR code
  uint16_t sdst = operand::kNone; // VOP3b carry-out / VOPC e64 SGPR pair
  uint32_t literal = 0;
  bool has_literal = false;
  int32_t simm16 = 0;             // SOPK/SOPP immediate (sign-extended where the op says)

  // VOP3 / VOP3P modifiers.
  uint8_t abs = 0, neg = 0, neg_hi = 0, opsel = 0, opsel_hi = 0, omod = 0;
  bool clamp = false;
  // VOP3P-MAI.
  uint8_t cbsz = 0, abid = 0, blgp = 0;
  bool acc_cd = false;            // C and D are AGPRs
  uint8_t acc = 0;                // bit 0: A in AGPRs, bit 1: B in AGPRs
  bool scaled = false;            // v_mfma_scale_*: scale VGPRs and byte selects below
  uint16_t scale_src[2] = {operand::kNone, operand::kNone};
  uint8_t scale_sel[2] = {0, 0};

  bool is_sdwa = false, is_dpp = false;
  Sdwa sdwa;
  Dpp dpp;

  // Memory.
  int32_t offset = 0;             // DS offset0 (or 16-bit offset), MUBUF/FLAT/SMEM offset
  uint8_t offset1 = 0;            // DS offset1
  uint8_t vaddr = 0, vdata = 0, data1 = 0, vdst = 0;  // VGPR numbers
  uint8_t saddr = 0x7F;           // FLAT/GLOBAL: 0x7F = off
  uint8_t srsrc = 0, soffset = 0; // MUBUF: SGPR of the resource (multiple of 4), soffset code
  uint8_t sbase = 0, sdata = 0;   // SMEM
  uint8_t seg = 0;                // FLAT segment: 0 flat, 1 scratch, 2 global
  bool offen = false, idxen = false, lds = false, gds = false, glc = false, slc = false;
  bool sc1 = false, nt = false, imm = false, soe = false;
  bool vdata_acc = false;         // MUBUF/FLAT/DS data or destination in AGPRs
};

}  // namespace zyfa::emu
