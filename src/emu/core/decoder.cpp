// Field layouts: AMD CDNA4 ISA, chapter "Microcode Formats" (amdgpu_isa_cdna4.xml encodings
// SOP2/SOPK/SOP1/SOPC/SOPP/SMEM/VOP2/VOP1/VOPC/VOP3A/VOP3B/VOP3P/VOP3P-MAI/DS/MUBUF/FLAT,
// SDWA and DPP words), cross-checked against llvm-mc -show-encoding for gfx950
// (llvm/test/MC/AMDGPU/gfx950*.s, gfx90a/gfx940 MC tests for the ACC and sc0/sc1/nt bits).
#include "emu/core/decoder.h"

#include <array>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <set>

#include "emu/isa/isa_opcodes.h"
#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

struct Table {
  std::array<const char*, 1024> names{};
  Table(const OpcodeName* entries, size_t count) {
    for (size_t i = 0; i < count; ++i) names[entries[i].op] = entries[i].name;
  }
  const char* operator[](unsigned op) const { return op < names.size() ? names[op] : nullptr; }
};

const Table& table(Encoding enc, uint8_t seg) {
  static const Table sop2(kSop2Opcodes, kSop2OpcodesCount), sopk(kSopkOpcodes, kSopkOpcodesCount),
      sop1(kSop1Opcodes, kSop1OpcodesCount), sopc(kSopcOpcodes, kSopcOpcodesCount),
      sopp(kSoppOpcodes, kSoppOpcodesCount), smem(kSmemOpcodes, kSmemOpcodesCount),
      vop2(kVop2Opcodes, kVop2OpcodesCount), vop1(kVop1Opcodes, kVop1OpcodesCount),
      vopc(kVopcOpcodes, kVopcOpcodesCount), vop3(kVop3Opcodes, kVop3OpcodesCount),
      vop3p(kVop3pOpcodes, kVop3pOpcodesCount), ds(kDsOpcodes, kDsOpcodesCount),
      mubuf(kMubufOpcodes, kMubufOpcodesCount), flat(kFlatOpcodes, kFlatOpcodesCount),
      scratch(kScratchOpcodes, kScratchOpcodesCount), global(kGlobalOpcodes, kGlobalOpcodesCount),
      none(nullptr, 0);
  switch (enc) {
    case Encoding::kSop2: return sop2;
    case Encoding::kSopk: return sopk;
    case Encoding::kSop1: return sop1;
    case Encoding::kSopc: return sopc;
    case Encoding::kSopp: return sopp;
    case Encoding::kSmem: return smem;
    case Encoding::kVop2: return vop2;
    case Encoding::kVop1: return vop1;
    case Encoding::kVopc: return vopc;
    case Encoding::kVop3: return vop3;
    case Encoding::kVop3p: return vop3p;
    case Encoding::kDs: return ds;
    case Encoding::kMubuf: return mubuf;
    case Encoding::kFlat: return seg == 0 ? flat : seg == 1 ? scratch : global;
    default: return none;
  }
}

// Derived spellings (_sdwa, _dpp, v_mfma_scale_) live as long as the process.
const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  return names.insert(s).first->c_str();
}

std::string replace_suffix(const char* name, const char* suffix) {
  std::string s = name;
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "_e32") == 0) s.resize(s.size() - 4);
  return s + suffix;
}

uint32_t bits(uint32_t w, int hi, int lo) { return (w >> lo) & ((1u << (hi - lo + 1)) - 1); }

Instruction invalid(uint32_t pc, uint32_t w0) {
  Instruction in;
  in.enc = Encoding::kInvalid;
  in.pc = pc;
  in.word0 = w0;
  in.size = 4;
  in.name = "<invalid>";
  return in;
}

// The words of a code object, read with a bounds check.
struct Code {
  const uint8_t* bytes;
  size_t size;
  bool word(uint32_t at, uint32_t* out) const {
    if (at + 4 > size) return false;
    std::memcpy(out, bytes + at, 4);
    return true;
  }
};

// The leading bits of the first dword name the encoding. Tried in this order: the SOP1, SOPC
// and SOPP prefixes lie inside SOPK's and SOP2's, VOP1's and VOPC's inside VOP2's.
struct Form {
  uint8_t shift;
  uint16_t prefix;
  Encoding enc;
  bool two_words;
};
constexpr Form kForms[] = {
    {23, 0x17D, Encoding::kSop1, false},  {23, 0x17E, Encoding::kSopc, false},
    {23, 0x17F, Encoding::kSopp, false},  {28, 0xB, Encoding::kSopk, false},
    {30, 0x2, Encoding::kSop2, false},    {25, 0x3F, Encoding::kVop1, false},
    {25, 0x3E, Encoding::kVopc, false},   {31, 0x0, Encoding::kVop2, false},
    {23, 0x1A7, Encoding::kVop3p, true},  {26, 0x34, Encoding::kVop3, true},
    {26, 0x30, Encoding::kSmem, true},    {26, 0x36, Encoding::kDs, true},
    {26, 0x38, Encoding::kMubuf, true},   {26, 0x37, Encoding::kFlat, true},
};

const Form* form_of(uint32_t w0) {
  for (const Form& f : kForms)
    if ((w0 >> f.shift) == f.prefix) return &f;
  return nullptr;
}

// The one-dword encodings (scalar ALU, VOP1/VOP2/VOPC).
void decode_short(Instruction& in, uint32_t w0) {
  switch (in.enc) {
    case Encoding::kSop1:
      in.op = bits(w0, 15, 8);
      in.dst = bits(w0, 22, 16);
      in.src[0] = bits(w0, 7, 0);
      break;
    case Encoding::kSopc:
      in.op = bits(w0, 22, 16);
      in.src[0] = bits(w0, 7, 0);
      in.src[1] = bits(w0, 15, 8);
      break;
    case Encoding::kSopp:
      in.op = bits(w0, 22, 16);
      in.simm16 = static_cast<int16_t>(w0 & 0xFFFF);
      break;
    case Encoding::kSopk:
      in.op = bits(w0, 27, 23);
      in.dst = bits(w0, 22, 16);
      in.simm16 = static_cast<int32_t>(w0 & 0xFFFF);  // raw; the op decides on sign extension
      if (in.op == op::S_SETREG_IMM32_B32) in.has_literal = true;
      break;
    case Encoding::kSop2:
      in.op = bits(w0, 29, 23);
      in.dst = bits(w0, 22, 16);
      in.src[0] = bits(w0, 7, 0);
      in.src[1] = bits(w0, 15, 8);
      break;
    case Encoding::kVop1:
      in.op = bits(w0, 16, 9);
      in.valu = 0x140 + in.op;
      in.dst = 256 + bits(w0, 24, 17);
      in.src[0] = bits(w0, 8, 0);
      break;
    case Encoding::kVopc:
      in.op = bits(w0, 24, 17);
      in.valu = in.op;
      in.src[0] = bits(w0, 8, 0);
      in.src[1] = 256 + bits(w0, 16, 9);
      in.sdst = operand::kVccLo;
      break;
    case Encoding::kVop2:
      in.op = bits(w0, 30, 25);
      in.valu = 0x100 + in.op;
      in.dst = 256 + bits(w0, 24, 17);
      in.src[0] = bits(w0, 8, 0);
      in.src[1] = 256 + bits(w0, 16, 9);
      if (in.valu == op::V_FMAMK_F32 || in.valu == op::V_FMAAK_F32 || in.valu == op::V_MADMK_F16 ||
          in.valu == op::V_MADAK_F16)
        in.has_literal = true;
      break;
    default:
      break;
  }
}

void decode_vop3(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 25, 16);
  in.valu = in.op;
  in.dst = 256 + bits(w0, 7, 0);
  in.src[0] = bits(w1, 8, 0);
  in.src[1] = bits(w1, 17, 9);
  in.src[2] = bits(w1, 26, 18);
  in.omod = bits(w1, 28, 27);
  in.neg = bits(w1, 31, 29);
  in.clamp = bits(w0, 15, 15);
  // VOP3b: carry ops and div_scale write an SGPR pair in [14:8] instead of abs/op_sel.
  const uint16_t o = in.op;
  const bool vop3b = o == op::V_ADD_CO_U32 || o == op::V_SUB_CO_U32 ||
                     o == op::V_SUBREV_CO_U32 || o == op::V_ADDC_CO_U32 ||
                     o == op::V_SUBB_CO_U32 || o == op::V_SUBBREV_CO_U32 ||
                     o == op::V_DIV_SCALE_F32 || o == op::V_DIV_SCALE_F64 ||
                     o == op::V_MAD_U64_U32 || o == op::V_MAD_I64_I32;
  if (vop3b) {
    in.sdst = bits(w0, 14, 8);
  } else {
    in.abs = bits(w0, 10, 8);
    in.opsel = bits(w0, 14, 11);
  }
  if (o < 0x100) {  // VOPC promoted: the SGPR pair destination is in vdst
    in.sdst = bits(w0, 7, 0);
    in.dst = operand::kNone;
  }
  if (o == op::V_READLANE_B32 || o == op::V_READFIRSTLANE_B32) in.dst = bits(w0, 7, 0);
}

void decode_vop3p(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 22, 16);
  in.dst = 256 + bits(w0, 7, 0);
  in.src[0] = bits(w1, 8, 0);
  in.src[1] = bits(w1, 17, 9);
  in.src[2] = bits(w1, 26, 18);
  const bool mai = (in.op >= 0x2C && in.op <= 0x2E) || in.op >= 0x35 ||
                   in.op == op::V_ACCVGPR_READ_B32 || in.op == op::V_ACCVGPR_WRITE_B32;
  const bool pk_f32 = in.op >= op::V_PK_FMA_F32 && in.op <= op::V_PK_MOV_B32;
  if (mai && !pk_f32) {
    in.acc_cd = bits(w0, 15, 15);
    in.abid = bits(w0, 14, 11);
    in.cbsz = bits(w0, 10, 8);
    in.blgp = bits(w1, 31, 29);
    in.acc = bits(w1, 28, 27);
  } else {
    in.clamp = bits(w0, 15, 15);
    in.opsel = bits(w0, 13, 11);
    in.opsel_hi = bits(w1, 28, 27) | (bits(w0, 14, 14) << 2);
    in.neg_hi = bits(w0, 10, 8);
    in.neg = bits(w1, 31, 29);
  }
}

// Single-bit flags of a dword, each a bool field of the instruction.
struct Flag {
  bool Instruction::*field;
  uint8_t bit;
};
void set_flags(Instruction& in, uint32_t w, std::initializer_list<Flag> flags) {
  for (const Flag& f : flags) in.*f.field = (w >> f.bit) & 1;
}

// The address and data VGPRs of the second dword of DS, MUBUF and FLAT.
void decode_vaddr_vdata(Instruction& in, uint32_t w1) {
  in.vaddr = bits(w1, 7, 0);
  in.vdata = bits(w1, 15, 8);
}

void decode_smem(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 25, 18);
  in.sbase = bits(w0, 5, 0) * 2;
  in.sdata = bits(w0, 12, 6);
  set_flags(in, w0, {{&Instruction::soe, 14}, {&Instruction::glc, 16}, {&Instruction::imm, 17}});
  in.offset = static_cast<int32_t>(bits(w1, 20, 0) << 11) >> 11;  // signed 21 bits
  in.soffset = bits(w1, 31, 25);
}

void decode_ds(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 24, 17);
  in.offset = bits(w0, 7, 0);
  in.offset1 = bits(w0, 15, 8);
  set_flags(in, w0, {{&Instruction::gds, 16}, {&Instruction::vdata_acc, 25}});
  decode_vaddr_vdata(in, w1);
  in.data1 = bits(w1, 23, 16);
  in.vdst = bits(w1, 31, 24);
}

void decode_mubuf(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 24, 18);
  in.offset = bits(w0, 11, 0);
  set_flags(in, w0, {{&Instruction::offen, 12}, {&Instruction::idxen, 13}, {&Instruction::glc, 14},
                     {&Instruction::sc1, 15}, {&Instruction::lds, 16}, {&Instruction::nt, 17}});
  decode_vaddr_vdata(in, w1);
  in.srsrc = bits(w1, 20, 16) * 4;
  in.vdata_acc = bits(w1, 23, 23);
  in.soffset = bits(w1, 31, 24);
}

void decode_flat(Instruction& in, uint32_t w0, uint32_t w1) {
  in.op = bits(w0, 24, 18);
  in.seg = bits(w0, 15, 14);
  in.offset = in.seg == 0 ? static_cast<int32_t>(bits(w0, 11, 0))
                          : static_cast<int32_t>(bits(w0, 12, 0) << 19) >> 19;
  set_flags(in, w0, {{&Instruction::lds, 13}, {&Instruction::glc, 16}, {&Instruction::nt, 17}, {&Instruction::sc1, 25}});
  decode_vaddr_vdata(in, w1);
  in.saddr = bits(w1, 22, 16);
  in.vdata_acc = bits(w1, 23, 23);
  in.vdst = bits(w1, 31, 24);
}

// SDWA second dword of a VOP1/VOP2/VOPC instruction (src0 = 249).
void decode_sdwa(Instruction& in, uint32_t w1, const char* name) {
  in.is_sdwa = true;
  Sdwa& s = in.sdwa;
  s.src0_sgpr = bits(w1, 23, 23);
  in.src[0] = s.src0_sgpr ? bits(w1, 7, 0) : 256 + bits(w1, 7, 0);
  if (in.enc == Encoding::kVopc) {
    s.sdst_vcc = !bits(w1, 15, 15);
    s.sdst = bits(w1, 14, 8);
    in.sdst = s.sdst_vcc ? operand::kVccLo : s.sdst;
  } else {
    s.dst_sel = bits(w1, 10, 8);
    s.dst_unused = bits(w1, 12, 11);
    s.clamp = bits(w1, 13, 13);
    s.omod = bits(w1, 15, 14);
  }
  s.src0_sel = bits(w1, 18, 16);
  s.src0_sext = bits(w1, 19, 19);
  s.src0_neg = bits(w1, 20, 20);
  s.src0_abs = bits(w1, 21, 21);
  s.src1_sel = bits(w1, 26, 24);
  s.src1_sext = bits(w1, 27, 27);
  s.src1_neg = bits(w1, 28, 28);
  s.src1_abs = bits(w1, 29, 29);
  s.src1_sgpr = bits(w1, 31, 31);
  if (in.enc != Encoding::kVop1 && s.src1_sgpr) in.src[1] = in.src[1] - 256;
  in.name = intern(replace_suffix(name, "_sdwa"));
}

// DPP second dword of a VOP1/VOP2/VOPC instruction (src0 = 250).
void decode_dpp(Instruction& in, uint32_t w1, const char* name) {
  in.is_dpp = true;
  Dpp& d = in.dpp;
  in.src[0] = 256 + bits(w1, 7, 0);
  d.ctrl = bits(w1, 16, 8);
  d.bound_ctrl = bits(w1, 19, 19);
  d.src0_neg = bits(w1, 20, 20);
  d.src0_abs = bits(w1, 21, 21);
  d.src1_neg = bits(w1, 22, 22);
  d.src1_abs = bits(w1, 23, 23);
  d.bank_mask = bits(w1, 27, 24);
  d.row_mask = bits(w1, 31, 28);
  in.name = intern(replace_suffix(name, "_dpp"));
}

}  // namespace

const char* encoding_name(Encoding e) {
  static const char* const names[] = {"invalid", "SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM",
                                       "VOP2", "VOP1", "VOPC", "VOP3", "VOP3P", "DS", "MUBUF",
                                       "FLAT"};
  return names[static_cast<int>(e)];
}

const char* opcode_mnemonic(Encoding enc, unsigned op, uint8_t flat_seg) {
  return table(enc, flat_seg)[op];
}

namespace {

// v_mfma_scale_*: the dword pair at pc (V_MFMA_LD_SCALE_B32, decoded into `ld`) carries the
// scale operands; the F8F6F4 MFMA they apply to follows it. Both decode as one instruction.
Instruction decode_mfma_scale(const Code& code, const Instruction& ld) {
  const uint32_t pc = ld.pc, w0 = ld.word0, w1 = ld.word1;
  uint32_t m0 = 0, m1 = 0;
  if (!code.word(pc + 8, &m0) || !code.word(pc + 12, &m1) || (m0 >> 23) != 0x1A7)
    return invalid(pc, w0);
  Instruction mf = decode_instruction(code.bytes, code.size, pc + 8);
  if (mf.enc != Encoding::kVop3p ||
      (mf.op != op::V_MFMA_F32_16X16X128_F8F6F4 && mf.op != op::V_MFMA_F32_32X32X64_F8F6F4))
    return invalid(pc, w0);
  const uint8_t opsel = bits(w0, 13, 11), opsel_hi = bits(w1, 28, 27);
  mf.scaled = true;
  mf.scale_src[0] = bits(w1, 8, 0);
  mf.scale_src[1] = bits(w1, 17, 9);
  mf.scale_sel[0] = (opsel & 1) + 2 * (opsel_hi & 1);
  mf.scale_sel[1] = ((opsel >> 1) & 1) + 2 * ((opsel_hi >> 1) & 1);
  mf.pc = pc;
  mf.word0 = w0;
  mf.word1 = w1;
  mf.size = 16;
  std::string n = mf.name;
  mf.name = intern("v_mfma_scale_" + n.substr(7));
  return mf;
}

// The fields of a two-dword encoding.
void decode_long(Instruction& in, uint32_t w0, uint32_t w1) {
  switch (in.enc) {
    case Encoding::kVop3: decode_vop3(in, w0, w1); break;
    case Encoding::kVop3p: decode_vop3p(in, w0, w1); break;
    case Encoding::kSmem: decode_smem(in, w0, w1); break;
    case Encoding::kDs: decode_ds(in, w0, w1); break;
    case Encoding::kMubuf: decode_mubuf(in, w0, w1); break;
    case Encoding::kFlat: decode_flat(in, w0, w1); break;
    default: break;
  }
}

bool is_vop_short(Encoding e) {
  return e == Encoding::kVop1 || e == Encoding::kVop2 || e == Encoding::kVopc;
}

}  // namespace

Instruction decode_instruction(const uint8_t* bytes, size_t code_size, uint32_t pc) {
  const Code code{bytes, code_size};
  uint32_t w0 = 0;
  if (!code.word(pc, &w0)) return invalid(pc, 0);
  const Form* form = form_of(w0);
  if (!form) return invalid(pc, w0);
  Instruction in;
  in.pc = pc;
  in.word0 = w0;
  in.size = 4;
  in.enc = form->enc;
  if (form->two_words) {
    uint32_t w1 = 0;
    if (!code.word(pc + 4, &w1)) return invalid(pc, w0);
    in.word1 = w1;
    in.size = 8;
    decode_long(in, w0, w1);
    if (in.enc == Encoding::kVop3p && in.op == op::V_MFMA_LD_SCALE_B32) return decode_mfma_scale(code, in);
  } else {
    decode_short(in, w0);
  }

  const char* name = table(in.enc, in.seg)[in.op];
  if (!name) return invalid(pc, w0);
  in.name = name;

  // SDWA / DPP second dword (VOP1/VOP2/VOPC with src0 = 249 / 250).
  if (is_vop_short(in.enc) && (in.src[0] == operand::kSdwa || in.src[0] == operand::kDpp)) {
    uint32_t w1 = 0;
    if (!code.word(pc + 4, &w1)) return invalid(pc, w0);
    in.word1 = w1;
    in.size = 8;
    if (in.src[0] == operand::kSdwa) decode_sdwa(in, w1, name);
    else decode_dpp(in, w1, name);
    return in;
  }

  // A 32-bit literal follows SOP*/VOP1/VOP2/VOPC instructions that name operand 255.
  const bool can_literal = in.enc == Encoding::kSop1 || in.enc == Encoding::kSop2 ||
                           in.enc == Encoding::kSopc || is_vop_short(in.enc);
  if (can_literal && (in.src[0] == operand::kLiteral || in.src[1] == operand::kLiteral))
    in.has_literal = true;
  if (in.has_literal) {
    if (!code.word(pc + in.size, &in.literal)) return invalid(pc, w0);
    in.size += 4;
  }
  return in;
}

std::vector<Instruction> decode_range(const uint8_t* code, size_t code_size, uint32_t begin,
                                      uint32_t end) {
  std::vector<Instruction> out;
  for (uint32_t pc = begin; pc < end && pc < code_size;) {
    out.push_back(decode_instruction(code, code_size, pc));
    pc += out.back().size;
  }
  return out;
}

}  // namespace zyfa::emu
