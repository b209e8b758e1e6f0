// Vector ALU: VOP1, VOP2, VOPC and VOP3 (incl. VOP3b carry forms), with SDWA and DPP.
// Semantics: AMD CDNA4 ISA, "Vector ALU Operations" (pseudocode per opcode as extracted in
// tinygrad/runtime/autogen/amd/cdna/str_pcode.py), "SDWA" and "DPP" sections. Float
// arithmetic is IEEE binary32/64 with round-to-nearest-even (MODE round bits other than RNE
// are refused), denormals per MODE. Inactive lanes (EXEC = 0) are never written; VOPC writes 0
// for them.
#include "emu/core/bits.h"
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/core/fp_bits.h"
#include "emu/core/valu_ops.h"
#include "emu/isa/isa_ops.h"
#include "emu/semantics/convert.h"
#include "emu/semantics/mfma.h"
#include "emu/semantics/transcendental.h"

namespace zyfa::emu {
namespace {

using OpType = Executor::OpType;

int width_of(ValuType t) {
  switch (t) {
    case ValuType::kF64: case ValuType::kI64: return 64;
    case ValuType::kF16: case ValuType::kI16: case ValuType::kBF16: return 16;
    default: return 32;
  }
}

OpType optype_of(ValuType t) {
  switch (t) {
    case ValuType::kF32: return OpType::kF32;
    case ValuType::kF16: return OpType::kF16;
    case ValuType::kF64: return OpType::kF64;
    case ValuType::kI64: return OpType::kB64;
    default: return OpType::kB32;
  }
}

// v_min_f32/v_max_f32 as the CDNA4 pseudocode defines them (tinygrad cdna str_pcode.py,
// V_MIN_F32/V_MAX_F32): with MODE.IEEE a signaling NaN input gives that NaN quieted (S0 checked
// first); otherwise, and for quiet NaNs, a NaN input gives the other operand; -0 < +0.
// MODE.IEEE is bit 9 of MODE (from the kernel descriptor's ENABLE_IEEE_MODE).
constexpr uint32_t kModeIeee = 1u << 9;
// V_MIN_F64/V_MAX_F64: the same rules on binary64 bits.
bool is_nan64(uint64_t u) { return (u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull; }
bool is_snan64(uint64_t u) { return is_nan64(u) && !(u & 0x0008000000000000ull); }
bool is_nan_bits(uint32_t u) { return is_nan32(u); }
bool is_nan_bits(uint64_t u) { return is_nan64(u); }
bool is_snan_bits(uint32_t u) { return is_snan32(u); }
bool is_snan_bits(uint64_t u) { return is_snan64(u); }
uint32_t quiet_bits(uint32_t u) { return quiet32(u); }
uint64_t quiet_bits(uint64_t u) { return u | 0x0008000000000000ull; }
float value_of(uint32_t u) { return as_f32(u); }
double value_of(uint64_t u) { return as_f64(u); }

// min (is_max false) or max of two f32 or f64 bit patterns by the rules above.
template <typename U>
U fminmax(U a, U b, bool ieee, bool is_max) {
  if (ieee && is_snan_bits(a)) return quiet_bits(a);
  if (ieee && is_snan_bits(b)) return quiet_bits(b);
  if (is_nan_bits(a)) return b;
  if (is_nan_bits(b)) return a;
  const auto x = value_of(a), y = value_of(b);
  if (x == y) {  // -0 < +0
    const bool a_neg = a >> (8 * sizeof(U) - 1);
    return is_max ? (a_neg ? b : a) : (a_neg ? a : b);
  }
  return (is_max ? x > y : x < y) ? a : b;
}
}  // namespace

uint32_t fmin32(uint32_t a, uint32_t b, bool ieee) { return fminmax(a, b, ieee, false); }
uint32_t fmax32(uint32_t a, uint32_t b, bool ieee) { return fminmax(a, b, ieee, true); }

namespace {

uint64_t fminmax64(uint64_t a, uint64_t b, bool ieee, bool is_max) { return fminmax(a, b, ieee, is_max); }

// Whether any of the 64 lanes holds a NaN (vectorizes).
bool any_nan32(const uint32_t* v) {
  uint32_t any = 0;
  for (int l = 0; l < kLanes; ++l) any |= uint32_t((v[l] & 0x7FFFFFFFu) > 0x7F800000u);
  return any != 0;
}

}  // namespace

uint32_t perm_b32(uint32_t a, uint32_t b, uint32_t selector) {
  const uint64_t bytes = (uint64_t(a) << 32) | b;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t sel = (selector >> (8 * i)) & 0xFF;
    uint32_t byte;
    if (sel <= 7) byte = (bytes >> (8 * sel)) & 0xFF;
    else if (sel <= 11) {  // sign of the 16-bit words: 8 -> bit 15 of b, 9 -> 31, 10 -> 47, 11 -> 63
      const int bit = 15 + 16 * (sel - 8);
      byte = ((bytes >> bit) & 1) ? 0xFF : 0x00;
    } else if (sel == 12) byte = 0x00;
    else byte = 0xFF;
    r |= byte << (8 * i);
  }
  return r;
}

// v_perm_b32 with one selector for every lane (a constant or an SGPR, nearly always) made of
// byte selects (0-7) and constant bytes (12: 0x00, 13-255: 0xFF): the same bytes as the
// per-lane pseudocode through fixed shifts and masks, in a loop that vectorizes. False (nothing
// written) for per-lane selectors or the sign-replicating selects 8-11.
bool perm_uniform(const uint32_t* __restrict a, const uint32_t* __restrict b, const uint32_t* c,
                  uint32_t* __restrict out) {
  const uint32_t sel = c[0];
  uint32_t differ = 0;
  for (int l = 0; l < kLanes; ++l) differ |= c[l] ^ sel;
  if (differ) return false;
  unsigned shift[4];
  uint64_t mask[4];
  uint32_t fixed = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t s = (sel >> (8 * i)) & 0xFF;
    if (s >= 8 && s <= 11) return false;
    shift[i] = s <= 7 ? 8 * s : 0;
    mask[i] = s <= 7 ? 0xFF : 0;
    if (s >= 13) fixed |= 0xFFu << (8 * i);
  }
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t bytes = (uint64_t(a[l]) << 32) | b[l];
    uint32_t r = fixed;
    for (int i = 0; i < 4; ++i) r |= uint32_t((bytes >> shift[i]) & mask[i]) << (8 * i);
    out[l] = r;
  }
  return true;
}

namespace {

// v_min/v_max (two sources) or v_min3/v_max3 (three) of NaN-free lanes through the order keys,
// in a plain loop that vectorizes.
template <bool kMax, int kSources>
void minmax_lanes(const uint32_t* __restrict a, const uint32_t* __restrict b, const uint32_t* __restrict c,
                  uint32_t* __restrict out) {
  for (int l = 0; l < kLanes; ++l) {
    uint32_t r = kMax ? max_ordered(a[l], b[l]) : min_ordered(a[l], b[l]);
    if (kSources == 3) r = kMax ? max_ordered(r, c[l]) : min_ordered(r, c[l]);
    out[l] = r;
  }
}

uint32_t med3_f32(uint32_t a, uint32_t b, uint32_t c, bool ieee) {
  if (is_nan32(a) || is_nan32(b) || is_nan32(c)) return fmin32(fmin32(a, b, ieee), c, ieee);
  const uint32_t mx = fmax32(fmax32(a, b, ieee), c, ieee);
  if (mx == a) return fmax32(b, c, ieee);
  if (mx == b) return fmax32(a, c, ieee);
  return fmax32(a, b, ieee);
}

// The VOPC comparison `cond` (valu_ops.h): f32/f16/f64 use all 16 codes, with `unordered`
// true when an operand is NaN; integers use codes 0-7 (5 is ne, 7 true), never unordered.
template <typename T>
bool compare(uint8_t cond, T a, T b, bool unordered) {
  switch (cond) {
    case 0: return false;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return !unordered && a != b;
    case 6: return a >= b;
    case 7: return !unordered;
    case 8: return unordered;
    case 9: return !(a >= b);
    case 10: return !(!unordered && a != b);
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return !(a == b);
    case 14: return !(a < b);
    default: return true;
  }
}
bool cmp_float(uint8_t cond, double a, double b) { return compare(cond, a, b, std::isnan(a) || std::isnan(b)); }
template <typename T>
bool cmp_int(uint8_t cond, T a, T b) {
  return compare(cond, a, b, false);
}

// v_cmp_class: bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0, 7 +denorm,
// 8 +normal, 9 +inf.
bool class_f64(double v, bool snan, uint32_t mask) {
  int bit;
  if (std::isnan(v)) bit = snan ? 0 : 1;
  else if (std::isinf(v)) bit = v < 0 ? 2 : 9;
  else if (v == 0) bit = std::signbit(v) ? 5 : 6;
  else if (std::fpclassify(v) == FP_SUBNORMAL) bit = v < 0 ? 4 : 7;
  else bit = v < 0 ? 3 : 8;
  return (mask >> bit) & 1;
}

uint32_t sdwa_select(uint32_t v, uint8_t sel, bool sext) {
  switch (sel) {
    case 0: case 1: case 2: case 3: {
      const uint32_t b = (v >> (8 * sel)) & 0xFF;
      return sext ? uint32_t(int32_t(int8_t(b))) : b;
    }
    case 4: case 5: {
      const uint32_t h = (v >> (16 * (sel - 4))) & 0xFFFF;
      return sext ? uint32_t(int32_t(int16_t(h))) : h;
    }
    default: return v;
  }
}

}  // namespace

// The per-instruction state of one VALU execution.
struct ValuExec {
  Executor& x;
  Wave& w;
  const Instruction& in;
  const ValuOpInfo& info;
  const bool is_vop3 = in.enc == Encoding::kVop3;
  uint64_t exec;
  uint64_t write_mask;  // lanes whose result is written (EXEC, narrowed by DPP)
  alignas(64) uint32_t tmp[3][kLanes];
  alignas(64) uint32_t res[kLanes];
  const uint32_t* s[3] = {nullptr, nullptr, nullptr};

  ValuExec(Executor& xx)
      : x(xx), w(xx.wave()), in(xx.inst()), info(valu_op_info(xx.inst().valu)), exec(xx.wave().exec()),
        write_mask(xx.wave().exec()) {}

  [[noreturn]] void unimplemented() { x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name)); }

  bool float_src() const {
    return info.src == ValuType::kF32 || info.src == ValuType::kF16 || info.src == ValuType::kF64;
  }

  // 32-bit source i with encoding modifiers applied (VOP3 abs/neg, SDWA sel/sext/abs/neg,
  // DPP lane permutation and abs/neg).
  const uint32_t* src(int i, ValuType t) {
    if (s[i]) return s[i];
    const uint16_t code = in.src[i];
    if (code == operand::kNone) x.fault("missing source operand");
    const OpType ot = optype_of(t);
    const uint32_t* p;
    if (in.is_dpp && i == 0) {
      p = dpp_src0();
    } else {
      p = x.vsrc(code, tmp[i], ot);
    }
    bool neg = false, abs = false;
    // v_bitop3 has no source modifiers: its abs, omod and neg fields hold the truth table.
    const bool bitop3 = in.valu == op::V_BITOP3_B32 || in.valu == op::V_BITOP3_B16;
    if (in.enc == Encoding::kVop3 && !bitop3) {
      neg = (in.neg >> i) & 1;
      abs = (in.abs >> i) & 1;
    } else if (in.is_sdwa) {
      const uint8_t sel = i == 0 ? in.sdwa.src0_sel : in.sdwa.src1_sel;
      const bool sext = i == 0 ? in.sdwa.src0_sext : in.sdwa.src1_sext;
      neg = i == 0 ? in.sdwa.src0_neg : in.sdwa.src1_neg;
      abs = i == 0 ? in.sdwa.src0_abs : in.sdwa.src1_abs;
      if (sel > 6) x.fault(fmt::format("SDWA src{}_sel 7 is reserved", i));
      if (sel != 6 || sext) {
        if (p != tmp[i]) { std::memcpy(tmp[i], p, sizeof(tmp[i])); p = tmp[i]; }
        for (int l = 0; l < kLanes; ++l) tmp[i][l] = sdwa_select(tmp[i][l], sel, sext);
        // A selected f32 word is an f16 in the low half: modifiers act on bit 15.
      }
    } else if (in.is_dpp) {
      neg = i == 0 ? in.dpp.src0_neg : in.dpp.src1_neg;
      abs = i == 0 ? in.dpp.src0_abs : in.dpp.src1_abs;
    }
    if (neg || abs) {
      const int width = width_of(t);
      if (width == 64) x.fault("64-bit source modifiers must go through src64");
      const uint32_t sign = width == 16 ? 0x8000u : 0x80000000u;
      if (p != tmp[i]) { std::memcpy(tmp[i], p, sizeof(tmp[i])); p = tmp[i]; }
      for (int l = 0; l < kLanes; ++l) {
        uint32_t v = tmp[i][l];
        if (abs) v &= ~sign;
        if (neg) v ^= sign;
        tmp[i][l] = v;
      }
    }
    s[i] = p;
    return p;
  }

  void src64(int i, uint64_t* out, ValuType t) {
    x.vsrc64(in.src[i], out, optype_of(t));
    if (in.enc == Encoding::kVop3) {
      const bool neg = (in.neg >> i) & 1, abs = (in.abs >> i) & 1;
      if (neg || abs)
        for (int l = 0; l < kLanes; ++l) {
          if (abs) out[l] &= ~(1ull << 63);
          if (neg) out[l] ^= 1ull << 63;
        }
    }
  }

  const uint32_t* dpp_src0() {
    const Dpp& d = in.dpp;
    const uint32_t r = in.src[0] - operand::kVgpr0;
    x.hazard_check_read_vgpr(r, false, false);
    // VALU write of a VGPR, then DPP reads it: 2 wait states; VALU write of EXEC then DPP: 5
    // (CDNA4 ISA "Manually Inserted Wait States").
    const uint64_t t = w.valu_vgpr_write_clock[r];
    if (t && wait_states_after_stamp(w, t) < 2)
      x.fault(fmt::format("DPP hazard: v{} read by DPP less than 2 wait states after a VALU write", r));
    if (w.valu_exec_write_clock && wait_states_after_stamp(w, w.valu_exec_write_clock) < 5)
      x.fault("DPP hazard: DPP less than 5 wait states after a VALU write of EXEC");
    const uint32_t* v = x.vreg_read(r);
    uint64_t valid = 0;
    for (int l = 0; l < kLanes; ++l) {
      int src = -1;
      const int row = l & ~15, in_row = l & 15;
      const uint16_t c = d.ctrl;
      if (c <= 0xFF) src = (l & ~3) | ((c >> (2 * (l & 3))) & 3);
      else if (c >= 0x101 && c <= 0x10F) src = in_row + (c & 0xF) <= 15 ? l + (c & 0xF) : -1;
      else if (c >= 0x111 && c <= 0x11F) src = in_row - int(c & 0xF) >= 0 ? l - (c & 0xF) : -1;
      else if (c >= 0x121 && c <= 0x12F) src = row | ((in_row - (c & 0xF)) & 15);
      else if (c == 0x130) src = l + 1 <= 63 ? l + 1 : -1;
      else if (c == 0x134) src = (l + 1) & 63;
      else if (c == 0x138) src = l - 1 >= 0 ? l - 1 : -1;
      else if (c == 0x13C) src = (l - 1) & 63;
      else if (c == 0x140) src = row | (15 - in_row);
      else if (c == 0x141) src = (l & ~7) | (7 - (l & 7));
      else if (c == 0x142) src = (in_row == 15 || row == 0) ? -1 : 0;  // handled below
      else if (c == 0x143) src = -1;
      else x.fault(fmt::format("DPP control 0x{:x} is not implemented", c));
      if (c == 0x142) {  // row_bcast:15: lane 15 of each row feeds the next row
        src = row >= 16 ? row - 1 : -1;
      } else if (c == 0x143) {  // row_bcast:31: lane 31 feeds rows 2 and 3
        src = row >= 32 ? 31 : -1;
      }
      const bool src_ok = src >= 0 && ((exec >> src) & 1);
      if (src_ok) {
        tmp[0][l] = v[src];
        valid |= 1ull << l;
      } else if (d.bound_ctrl) {
        tmp[0][l] = 0;
        valid |= 1ull << l;
      }
    }
    // Row and bank masks disable writes of whole rows / banks (lane % 4 within a row group).
    uint64_t enabled = 0;
    for (int l = 0; l < kLanes; ++l)
      if (((d.row_mask >> (l / 16)) & 1) && ((d.bank_mask >> ((l % 16) / 4)) & 1)) enabled |= 1ull << l;
    write_mask &= valid & enabled;
    return tmp[0];
  }

  // Float output modifiers (VOP3 omod/clamp, SDWA omod/clamp) for f32 results.
  // Set when the instruction's clamp/omod were given their meaning (out_f32, or the integer
  // clamp of v_add/sub_u32); an instruction that carries them without is refused afterwards.
  mutable bool output_modifiers_applied = false;
  // No omod and no clamp (almost every instruction): only the denormal flush is left, inline
  // so that the lane loops vectorize.
  bool plain_output() const {
    return in.enc == Encoding::kVop3 ? (!in.omod && !in.clamp) : in.is_sdwa ? (!in.sdwa.omod && !in.sdwa.clamp) : true;
  }
  const bool plain_out = plain_output();
  const bool flush_out = !(w.mode & (1u << 5));
  // Only an instruction with clamp or omod needs the flag set (execute_valu): the plain case
  // stays a store-free expression that lane loops vectorize.
  __attribute__((always_inline)) uint32_t out_f32(uint32_t r) const {
    if (plain_out) return flush_out ? flush32(r) : r;
    return out_f32_modified(r);
  }
  __attribute__((noinline)) uint32_t out_f32_modified(uint32_t r) const {
    output_modifiers_applied = true;
    const uint8_t omod = in.enc == Encoding::kVop3 ? in.omod : in.is_sdwa ? in.sdwa.omod : 0;
    const bool clamp = in.enc == Encoding::kVop3 ? in.clamp : in.is_sdwa ? in.sdwa.clamp : false;
    // The hardware ignores omod when MODE.IEEE is set or f32 output denormals are enabled
    // (LLVM SIFoldOperands: "omod is ignored by hardware if IEEE bit is enabled"; "If output
    // denormals are enabled, omod is ignored"). A kernel that asks for it then is refused:
    // the scaling it expects does not happen on the device.
    if (omod && (w.mode & ((1u << 9) | (1u << 5))))
      x.fault(fmt::format("output modifier omod on {} has no effect on the hardware with MODE.IEEE or f32 "
                          "output denormals enabled (MODE 0x{:x})", in.name, w.mode));
    if (omod || clamp) {
      float f = as_f32(r);
      if (omod == 1) f *= 2.0f;
      else if (omod == 2) f *= 4.0f;
      else if (omod == 3) f *= 0.5f;
      if (clamp) {
        if (std::isnan(f)) f = 0.0f;  // DX10_CLAMP: NaN clamps to 0
        f = std::min(std::max(f, 0.0f), 1.0f);
      }
      r = as_u32(f);
    }
    if (!(w.mode & (1u << 5))) r = flush32(r);  // f32 output denormals off
    return r;
  }
  __attribute__((always_inline)) uint32_t in_f32(uint32_t v) const { return (w.mode & (1u << 4)) ? v : flush32(v); }

  void check_round_mode() {
    if (w.mode & 0xF) x.fault(fmt::format("MODE round mode 0x{:x} is not modelled (only round-to-nearest-even)", w.mode & 0xF));
  }

  // Writes res[] to the destination VGPR, honouring SDWA dst_sel/dst_unused.
  void write_vgpr(uint32_t* dst_row) {
    if (in.is_sdwa && in.sdwa.dst_sel != 6) {
      const uint8_t sel = in.sdwa.dst_sel;
      // SDWA selects 0-5 are bytes and words, 6 the dword; 7 is reserved (CDNA4 ISA, SDWA).
      if (sel > 6) x.fault("SDWA dst_sel 7 is reserved");
      const uint32_t shift = sel <= 3 ? 8 * sel : 16 * (sel - 4);
      const uint32_t width = sel <= 3 ? 8 : 16;
      const uint32_t field = ((1u << width) - 1) << shift;
      for (int l = 0; l < kLanes; ++l) {
        if (!((write_mask >> l) & 1)) continue;
        const uint32_t v = (res[l] << shift) & field;
        uint32_t out;
        if (in.sdwa.dst_unused == 2) out = (dst_row[l] & ~field) | v;
        else if (in.sdwa.dst_unused == 1) {
          // UNUSED_SEXT: bits above the field copy its top bit, bits below are 0. A field that
          // ends at bit 31 (BYTE_3, WORD_1) has nothing above it: a shift by 32 would be
          // undefined (x86 masks it to 0 and sets every bit), so it is excluded explicitly.
          out = v;
          if (shift + width < 32 && ((v >> (shift + width - 1)) & 1)) out |= ~((1u << (shift + width)) - 1);
        } else out = v;
        dst_row[l] = out;
      }
      mark_partial_write();
      return;
    }
    if (write_mask == ~0ull) {
      std::memcpy(dst_row, res, sizeof(res));
      return;
    }
    for (int l = 0; l < kLanes; ++l)
      if ((write_mask >> l) & 1) dst_row[l] = res[l];
  }

  void mark_partial_write() {
    const uint32_t r = in.dst - operand::kVgpr0;
    w.fwd1_write_clock[r] = w.clock + 1;
  }

  uint32_t* dst_vgpr() {
    const uint32_t r = in.dst - operand::kVgpr0;
    valu_write_hazards(r);
    uint32_t* p = x.vdst(r);
    w.valu_vgpr_write_clock[r] = w.clock + 1;
    if (is_transcendental(in.valu)) w.trans_vgpr_write_clock[r] = w.clock + 1;
    return p;
  }

  // VALU writes of registers an MFMA is writing (WAW) or reading as SrcC (WAR).
  void valu_write_hazards(uint32_t r) {
    x.hazard_check_store_data_overwrite(r);
    if (!w.any_mfma || w.clock - w.last_mfma_clock > 24) return;
    const MfmaWrite& m = w.mfma_write[r];
    if (m.valid) {
      const int need = mfma_wait_states_for_valu(m.passes);
      const int64_t have = wait_states_after(w, m.clock);
      if (have < need)
        x.hazard_mfma("mfma-overwrite", m.clock, have, need,
                      fmt::format("MFMA hazard: VALU write of v{} {} wait state(s) after the {}-pass MFMA that writes "
                                  "it; gfx950 requires {}", r, have, m.passes, need));
    }
    if (w.mfma_srcc_read_until[r] > w.clock)
      x.hazard_mfma_srcc_war(r, fmt::format("MFMA hazard: VALU write of v{} while an in-flight MFMA still reads it as "
                                            "SrcC (needs {} more wait state(s))", r, w.mfma_srcc_read_until[r] - w.clock));
  }
  static int mfma_wait_states_for_valu(int passes) { return mfma_wait_states(passes).srcab_or_valu_read; }

  void write_sgpr_mask(uint16_t code, uint64_t mask) {
    x.swrite64(code, mask);
    if (code < 128) { w.valu_sgpr_write_clock[code] = w.clock + 1; w.valu_sgpr_write_clock[code + 1] = w.clock + 1; }
    if (code == operand::kExecLo) w.valu_exec_write_clock = w.clock + 1;
  }

  // Per-lane helpers. One small function per expression (noinline): inside it GCC inlines the
  // expression into the loop, which it does not do in the large family functions. With every
  // lane written, the results go to a local array first: no store in the loop can alias the
  // instruction's fields or MODE, whose tests then leave the loop and let it vectorize.
  template <typename F>
  __attribute__((noinline)) void lanes(F f) {
    if (write_mask == ~0ull) {
      alignas(64) uint32_t out[kLanes];
      for (int l = 0; l < kLanes; ++l) out[l] = f(l);
      std::memcpy(res, out, sizeof(out));
      return;
    }
    for (int l = 0; l < kLanes; ++l)
      if ((write_mask >> l) & 1) res[l] = f(l);
  }
  void store() {
    if (in.dst == operand::kNone) x.fault("missing destination");
    write_vgpr(dst_vgpr());
  }

  // Writes the destination pair: pair(l) gives lane l's {low, high} dwords.
  template <typename Pair>
  void store_pair_lanes(Pair pair) {
    const uint32_t d = in.dst - operand::kVgpr0;
    uint32_t* p0 = dst_vgpr();
    valu_write_hazards(d + 1);
    uint32_t* p1 = x.vdst(d + 1);
    w.valu_vgpr_write_clock[d + 1] = w.clock + 1;
    for (int l = 0; l < kLanes; ++l)
      if ((write_mask >> l) & 1) {
        const auto [lo, hi] = pair(l);
        p0[l] = lo;
        p1[l] = hi;
      }
  }
  void store_pair(const uint32_t* lo, const uint32_t* hi) {
    store_pair_lanes([&](int l) { return std::pair{lo[l], hi[l]}; });
  }

  // v_readlane/v_readfirstlane/v_writelane (GCNHazardRecognizer checkRWLaneHazards and the
  // gfx940 VDecCoExec rules): lane select SGPR written by a VALU 4, EXEC written by a VALU 4,
  // the VGPR a readlane reads written by a VALU 1.
  void lane_access_hazards(bool has_lane_select) {
    auto since = [&](uint64_t t) { return wait_states_after_stamp(w, t); };
    if (has_lane_select && in.src[1] < 128 && since(w.valu_sgpr_write_clock[in.src[1]]) < 4)
      x.fault(fmt::format("VALU hazard: lane select s{} of {} less than 4 wait states after a VALU wrote it",
                          in.src[1], in.name));
    if (since(w.valu_exec_write_clock) < 4)
      x.fault(fmt::format("VALU hazard: {} less than 4 wait states after a VALU wrote EXEC", in.name));
    if (in.valu != op::V_WRITELANE_B32 && in.src[0] >= operand::kVgpr0 &&
        since(w.valu_vgpr_write_clock[in.src[0] - operand::kVgpr0]) < 1)
      x.fault(fmt::format("VALU hazard: {} reads v{} right after a VALU wrote it (needs 1 wait state)", in.name,
                          in.src[0] - operand::kVgpr0));
  }

  // What an opcode family did with the instruction: not its opcode, a result in res[] for
  // store(), or every register already written.
  enum class Step : uint8_t { kOther, kStore, kWritten };
  const uint32_t* A() { return src(0, info.src); }
  const uint32_t* B() { return src(1, info.src); }
  const uint32_t* C() { return src(2, info.src); }

  // v_min/max(3)_f32 into res[] when no lane holds a NaN and MODE flushes no denormals
  // (nearly always): the pseudocode's results without its per-lane branches. False: not taken.
  bool minmax_fast(bool is_max, int sources) {
    if (!plain_out || flush_out || !(w.mode & (1u << 4))) return false;
    const uint32_t* a = A();
    const uint32_t* b = B();
    const uint32_t* c = sources == 3 ? C() : b;
    if (any_nan32(a) || any_nan32(b) || any_nan32(c)) return false;
    if (is_max) (sources == 3 ? minmax_lanes<true, 3> : minmax_lanes<true, 2>)(a, b, c, res);
    else (sources == 3 ? minmax_lanes<false, 3> : minmax_lanes<false, 2>)(a, b, c, res);
    return true;
  }

  void run();
  bool run_vopc();
  bool run_64bit();
  Step run_moves();
  Step run_f32();
  Step run_convert();
  Step run_integer();
  Step run_16bit();
};


bool ValuExec::run_vopc() {
  if (!info.is_cmp) return false;
  const uint16_t sdst = in.enc == Encoding::kVop3 ? in.sdst : in.sdst;  // VCC for e32 / SDWA default
  uint64_t mask = 0;
  if (info.is_class) {
    const uint32_t* m = src(1, ValuType::kB32);
    if (info.src == ValuType::kF64) {
      uint64_t a[kLanes];
      src64(0, a, ValuType::kF64);
      for (int l = 0; l < kLanes; ++l)
        if ((write_mask >> l) & 1) {
          const bool snan = std::isnan(as_f64(a[l])) && !((a[l] >> 51) & 1);
          if (class_f64(as_f64(a[l]), snan, m[l])) mask |= 1ull << l;
        }
    } else {
      const uint32_t* a = src(0, info.src);
      for (int l = 0; l < kLanes; ++l)
        if ((write_mask >> l) & 1) {
          double v;
          bool snan;
          if (info.src == ValuType::kF16) { v = f16_to_f32(uint16_t(a[l])); snan = std::isnan(v) && !((a[l] >> 9) & 1); }
          else { v = as_f32(a[l]); snan = is_snan32(a[l]); }
          if (class_f64(v, snan, m[l])) mask |= 1ull << l;
        }
    }
  } else if (info.src == ValuType::kF64 || info.src == ValuType::kI64) {
    uint64_t a[kLanes], b[kLanes];
    src64(0, a, info.src);
    src64(1, b, info.src);
    for (int l = 0; l < kLanes; ++l) {
      if (!((write_mask >> l) & 1)) continue;
      bool r;
      if (info.src == ValuType::kF64) r = cmp_float(info.cond, as_f64(a[l]), as_f64(b[l]));
      else if (info.is_signed) r = cmp_int<int64_t>(info.cond, int64_t(a[l]), int64_t(b[l]));
      else r = cmp_int<uint64_t>(info.cond, a[l], b[l]);
      if (r) mask |= 1ull << l;
    }
  } else {
    const uint32_t* a = src(0, info.src);
    const uint32_t* b = src(1, info.src);
    for (int l = 0; l < kLanes; ++l) {
      if (!((write_mask >> l) & 1)) continue;
      bool r;
      if (info.src == ValuType::kF32) r = cmp_float(info.cond, as_f32(in_f32(a[l])), as_f32(in_f32(b[l])));
      else if (info.src == ValuType::kF16) r = cmp_float(info.cond, f16_to_f32(uint16_t(a[l])), f16_to_f32(uint16_t(b[l])));
      else if (info.src == ValuType::kI16)
        r = info.is_signed ? cmp_int<int16_t>(info.cond, int16_t(a[l]), int16_t(b[l]))
                           : cmp_int<uint16_t>(info.cond, uint16_t(a[l]), uint16_t(b[l]));
      else r = info.is_signed ? cmp_int<int32_t>(info.cond, int32_t(a[l]), int32_t(b[l]))
                              : cmp_int<uint32_t>(info.cond, a[l], b[l]);
      if (r) mask |= 1ull << l;
    }
  }
  // Inactive lanes read as 0 in the result mask (CDNA4 ISA, VOPC).
  mask &= write_mask;
  if (info.is_cmpx) {
    // v_cmpx writes EXEC (and, in the e64 form, the SGPR destination as well on gfx9).
    if (in.enc == Encoding::kVop3 || in.is_sdwa) write_sgpr_mask(sdst, mask);
    else write_sgpr_mask(operand::kVccLo, mask);
    w.set_exec(mask);
    w.valu_exec_write_clock = w.clock + 1;
  } else {
    write_sgpr_mask(sdst, mask);
  }
  return true;
}

bool ValuExec::run_64bit() {
  uint64_t a[kLanes], b[kLanes], c[kLanes];
  auto store64 = [&](const uint64_t* r) {
    store_pair_lanes([&](int l) { return std::pair{uint32_t(r[l]), uint32_t(r[l] >> 32)}; });
  };
  uint64_t r[kLanes];
  auto each = [&](auto f) { for (int l = 0; l < kLanes; ++l) if ((write_mask >> l) & 1) r[l] = f(l); };
  switch (in.valu) {
    case op::V_MOV_B64: src64(0, a, ValuType::kI64); each([&](int l) { return a[l]; }); break;
    case op::V_ADD_F64: check_round_mode(); src64(0, a, ValuType::kF64); src64(1, b, ValuType::kF64);
      each([&](int l) { return as_u64(as_f64(a[l]) + as_f64(b[l])); }); break;
    case op::V_MUL_F64: check_round_mode(); src64(0, a, ValuType::kF64); src64(1, b, ValuType::kF64);
      each([&](int l) { return as_u64(as_f64(a[l]) * as_f64(b[l])); }); break;
    case op::V_FMA_F64: check_round_mode(); src64(0, a, ValuType::kF64); src64(1, b, ValuType::kF64); src64(2, c, ValuType::kF64);
      each([&](int l) { return as_u64(std::fma(as_f64(a[l]), as_f64(b[l]), as_f64(c[l]))); }); break;
    case op::V_MIN_F64: src64(0, a, ValuType::kF64); src64(1, b, ValuType::kF64);
      each([&](int l) { return fminmax64(a[l], b[l], w.mode & kModeIeee, false); }); break;
    case op::V_MAX_F64: src64(0, a, ValuType::kF64); src64(1, b, ValuType::kF64);
      each([&](int l) { return fminmax64(a[l], b[l], w.mode & kModeIeee, true); }); break;
    case op::V_LSHLREV_B64: { const uint32_t* sh = src(0, ValuType::kB32); src64(1, b, ValuType::kI64);
      each([&](int l) { return b[l] << (sh[l] & 63); }); break; }
    case op::V_LSHRREV_B64: { const uint32_t* sh = src(0, ValuType::kB32); src64(1, b, ValuType::kI64);
      each([&](int l) { return b[l] >> (sh[l] & 63); }); break; }
    case op::V_ASHRREV_I64: { const uint32_t* sh = src(0, ValuType::kB32); src64(1, b, ValuType::kI64);
      each([&](int l) { return uint64_t(int64_t(b[l]) >> (sh[l] & 63)); }); break; }
    case op::V_LSHL_ADD_U64: { src64(0, a, ValuType::kI64); const uint32_t* sh = src(1, ValuType::kB32); src64(2, c, ValuType::kI64);
      each([&](int l) { return (a[l] << (sh[l] & 7)) + c[l]; }); break; }
    case op::V_CVT_F64_F32: { const uint32_t* s0 = src(0, ValuType::kF32); each([&](int l) { return as_u64(double(as_f32(s0[l]))); }); break; }
    case op::V_CVT_F64_I32: { const uint32_t* s0 = src(0, ValuType::kB32); each([&](int l) { return as_u64(double(int32_t(s0[l]))); }); break; }
    case op::V_CVT_F64_U32: { const uint32_t* s0 = src(0, ValuType::kB32); each([&](int l) { return as_u64(double(s0[l])); }); break; }
    case op::V_MAD_U64_U32: case op::V_MAD_I64_I32: {
      const uint32_t* s0 = src(0, ValuType::kB32); const uint32_t* s1 = src(1, ValuType::kB32);
      src64(2, c, ValuType::kI64);
      uint64_t carry = 0;
      each([&](int l) {
        if (in.valu == op::V_MAD_U64_U32) {
          const unsigned __int128 full = (unsigned __int128)((uint64_t)s0[l] * s1[l]) + c[l];
          if (full >> 64) carry |= 1ull << l;
          return uint64_t(full);
        }
        // CDNA4 pseudocode (VOP3SD V_MAD_I64_I32): { D1.i1, D0.i64 } = 65'B(65'I(S0.i32) *
        // 65'I(S1.i32) + 65'I(S2.i64)): D1 is bit 64 of the 65-bit two's-complement sum, i.e.
        // its sign (the exact sum always fits in 65 bits), not a signed-overflow flag.
        const __int128 full = (__int128)((int64_t)int32_t(s0[l]) * int32_t(s1[l])) + (__int128)int64_t(c[l]);
        if ((static_cast<unsigned __int128>(full) >> 64) & 1) carry |= 1ull << l;
        return uint64_t(full);
      });
      store64(r);
      write_sgpr_mask(in.sdst, carry);
      return true;
    }
    default: return false;
  }
  store64(r);
  return true;
}

void ValuExec::run() {
  if (run_vopc()) return;
  if (in.valu == op::V_NOP || run_64bit()) return;
  if (is_vop3 && in.clamp && (in.valu == op::V_ADD_U32 || in.valu == op::V_SUB_U32 || in.valu == op::V_SUBREV_U32))
    output_modifiers_applied = true;  // unsigned saturation, in run_integer
  if (info.src == ValuType::kF32 && in.valu != op::V_MOV_B32) check_round_mode();
  // The first family that holds the opcode runs it; the most frequent families come first.
  Step s = run_moves();
  if (s == Step::kOther) s = run_f32();
  if (s == Step::kOther) s = run_convert();
  if (s == Step::kOther) s = run_integer();
  if (s == Step::kOther) s = run_16bit();
  if (s == Step::kOther) unimplemented();
  if (s == Step::kStore) store();
}

// Per-lane expressions are inlined into their lane loop whatever GCC's growth limits for this
// large file say: a call per lane would keep the loop from vectorizing.
#define LANE __attribute__((always_inline))

// One lane loop for a one-, two- or three-source expression: of f32 values x0..x2 (inputs
// and result through MODE's denormal flush and the output modifiers) or of u32 values u0..u2.
#define F32_1(EXPR) { const uint32_t* a = A(); lanes([&](int l) LANE { const float x0 = as_f32(in_f32(a[l])); (void)x0; return out_f32(as_u32(EXPR)); }); break; }
#define F32_2(EXPR) { const uint32_t* a = A(); const uint32_t* b = B(); \
    lanes([&](int l) LANE { const float x0 = as_f32(in_f32(a[l])), x1 = as_f32(in_f32(b[l])); return out_f32(as_u32(EXPR)); }); break; }
#define F32_3(EXPR) { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C(); \
    lanes([&](int l) LANE { const float x0 = as_f32(in_f32(a[l])), x1 = as_f32(in_f32(b[l])), x2 = as_f32(in_f32(c[l])); \
                       return out_f32(as_u32(EXPR)); }); break; }
#define U32_1(EXPR) { const uint32_t* a = A(); lanes([&](int l) LANE { const uint32_t u0 = a[l]; return uint32_t(EXPR); }); break; }
#define U32_2(EXPR) { const uint32_t* a = A(); const uint32_t* b = B(); \
    lanes([&](int l) LANE { const uint32_t u0 = a[l], u1 = b[l]; return uint32_t(EXPR); }); break; }
#define U32_3(EXPR) { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C(); \
    lanes([&](int l) LANE { const uint32_t u0 = a[l], u1 = b[l], u2 = c[l]; return uint32_t(EXPR); }); break; }

// Moves and lane access.
ValuExec::Step ValuExec::run_moves() {
  const uint16_t v = in.valu;
  switch (in.valu) {
    case op::V_MOV_B32: U32_1(u0)
    case op::V_READFIRSTLANE_B32: {
      lane_access_hazards(false);
      const uint32_t* a = A();
      const uint64_t e = exec;
      const int lane = e ? ctz64(e) : 0;
      const uint16_t d = in.enc == Encoding::kVop1 ? in.dst - operand::kVgpr0 : in.dst;
      x.swrite(d, a[lane]);
      if (d < 128) w.valu_sgpr_write_clock[d] = w.clock + 1;
      return Step::kWritten;
    }
    case op::V_READLANE_B32: {
      lane_access_hazards(true);
      const uint32_t* a = A();
      const uint32_t lane = x.sread(in.src[1]) & 63;
      x.swrite(in.dst, a[lane]);
      if (in.dst < 128) w.valu_sgpr_write_clock[in.dst] = w.clock + 1;
      return Step::kWritten;
    }
    case op::V_WRITELANE_B32: {
      lane_access_hazards(true);
      x.hazard_check_valu_sgpr_read(in.src[0]);
      const uint32_t val = x.sread(in.src[0]);
      const uint32_t lane = x.sread(in.src[1]) & 63;
      uint32_t* d = dst_vgpr();
      d[lane] = val;
      return Step::kWritten;
    }
    case op::V_CNDMASK_B32: {
      const uint32_t* a = A(); const uint32_t* b = B();
      const uint16_t mcode = is_vop3 ? in.src[2] : operand::kVccLo;
      x.hazard_check_valu_sgpr_read(mcode, 2);
      const uint64_t m = x.sread64(mcode);
      lanes([&](int l) { return ((m >> l) & 1) ? b[l] : a[l]; });
      break;
    }
    case op::V_PERMLANE32_SWAP_B32: case op::V_PERMLANE16_SWAP_B32: {
      // gfx950: swaps lanes between vdst and src0 (32: upper half of vdst with lower half of
      // src0; 16: odd 16-lane rows of vdst with even rows of src0). Both registers are written.
      const uint32_t d = in.dst - operand::kVgpr0, s0 = in.src[0] - operand::kVgpr0;
      if (in.src[0] < operand::kVgpr0) x.fault("permlane swap source must be a VGPR");
      // EXEC is not applied: the CDNA4 pseudocode of both swaps moves every lane pair and never
      // reads EXEC, and AMD's emulator rocjitsu states "EXEC mask is IGNORED" for them
      // (amdisa/codegen/execute/vector_special.py, gen_vector_permlane_swap).
      x.hazard_check_read_vgpr(d, false, false);
      x.hazard_check_read_vgpr(s0, false, false);
      // gfx950: a VALU write of either VGPR needs 2 wait states before the permlane swap
      // (GCNHazardRecognizer checkPermlaneHazards; hazards.cpp).
      x.hazard_check_permlane_swap(d, s0);
      uint32_t dv[kLanes], sv[kLanes];
      std::memcpy(dv, x.vreg_read(d), sizeof(dv));
      std::memcpy(sv, x.vreg_read(s0), sizeof(sv));
      const bool is32 = v == op::V_PERMLANE32_SWAP_B32;
      for (int l = 0; l < kLanes; ++l) {
        if (is32) {
          if (l >= 32) std::swap(dv[l], sv[l - 32]);
        } else {
          if ((l / 16) % 2 == 1) std::swap(dv[l], sv[l - 16]);
        }
      }
      valu_write_hazards(d);
      valu_write_hazards(s0);
      uint32_t* dp = x.vdst(d);
      uint32_t* sp = x.vdst(s0);
      for (int l = 0; l < kLanes; ++l) { dp[l] = dv[l]; sp[l] = sv[l]; }
      w.valu_vgpr_write_clock[d] = w.valu_vgpr_write_clock[s0] = w.clock + 1;
      return Step::kWritten;
    }
    default: return Step::kOther;
  }
  return Step::kStore;
}

// f32 arithmetic.
ValuExec::Step ValuExec::run_f32() {
  switch (in.valu) {
    case op::V_ADD_F32: F32_2(x0 + x1)
    case op::V_SUB_F32: F32_2(x0 - x1)
    case op::V_SUBREV_F32: F32_2(x1 - x0)
    case op::V_MUL_F32: F32_2(x0 * x1)
    case op::V_MUL_LEGACY_F32: F32_2((x0 == 0.0f || x1 == 0.0f) ? 0.0f : x0 * x1)
    case op::V_FMA_F32: F32_3(std::fma(x0, x1, x2))
    case op::V_DIV_FMAS_F32: {
      // A VALU write of VCC needs 4 wait states before v_div_fmas reads it (LLVM
      // GCNHazardRecognizer checkDivFMasHazards; CDNA4 ISA "Manually Inserted Wait States").
      for (uint16_t c : {operand::kVccLo, operand::kVccHi}) {
        const uint64_t t = w.valu_sgpr_write_clock[c];
        const int64_t have = wait_states_after_stamp(w, t);
        if (have < 4)
          x.fault(fmt::format("VALU hazard: v_div_fmas_f32 reads VCC {} wait state(s) after a VALU wrote it; "
                              "it requires 4", have));
      }
      // CDNA4 pseudocode V_DIV_FMAS_F32: VCC[lane] ? 2^32 * fma(S0, S1, S2) : fma(S0, S1, S2).
      const uint64_t vcc = w.vcc();
      const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C();
      lanes([&](int l) {
        const float f = std::fma(as_f32(in_f32(a[l])), as_f32(in_f32(b[l])), as_f32(in_f32(c[l])));
        return out_f32(as_u32((vcc >> l) & 1 ? f * 0x1p32f : f));
      });
      break;
    }
    case op::V_FMAC_F32: {
      const uint32_t* a = A(); const uint32_t* b = B();
      const uint32_t d = in.dst - operand::kVgpr0;
      x.hazard_check_read_vgpr(d, false, false);
      const uint32_t* c = x.vreg_read(d);
      lanes([&](int l) { return out_f32(as_u32(std::fma(as_f32(in_f32(a[l])), as_f32(in_f32(b[l])), as_f32(in_f32(c[l]))))); });
      break;
    }
    case op::V_FMAMK_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const float k = as_f32(in.literal);
      lanes([&](int l) { return out_f32(as_u32(std::fma(as_f32(in_f32(a[l])), k, as_f32(in_f32(b[l]))))); }); break; }
    case op::V_FMAAK_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const float k = as_f32(in.literal);
      lanes([&](int l) { return out_f32(as_u32(std::fma(as_f32(in_f32(a[l])), as_f32(in_f32(b[l])), k))); }); break; }
    case op::V_MIN_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const bool ie = w.mode & kModeIeee;
      if (minmax_fast(false, 2)) break;
      lanes([&](int l) { return out_f32(fmin32(in_f32(a[l]), in_f32(b[l]), ie)); }); break; }
    case op::V_MAX_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const bool ie = w.mode & kModeIeee;
      if (minmax_fast(true, 2)) break;
      lanes([&](int l) { return out_f32(fmax32(in_f32(a[l]), in_f32(b[l]), ie)); }); break; }
    case op::V_MIN3_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C(); const bool ie = w.mode & kModeIeee;
      if (minmax_fast(false, 3)) break;
      lanes([&](int l) { return out_f32(fmin32(fmin32(in_f32(a[l]), in_f32(b[l]), ie), in_f32(c[l]), ie)); }); break; }
    case op::V_MAX3_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C(); const bool ie = w.mode & kModeIeee;
      if (minmax_fast(true, 3)) break;
      lanes([&](int l) { return out_f32(fmax32(fmax32(in_f32(a[l]), in_f32(b[l]), ie), in_f32(c[l]), ie)); }); break; }
    case op::V_MED3_F32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C(); const bool ie = w.mode & kModeIeee;
      lanes([&](int l) { return out_f32(med3_f32(in_f32(a[l]), in_f32(b[l]), in_f32(c[l]), ie)); }); break; }
    case op::V_LDEXP_F32: { const uint32_t* a = A(); const uint32_t* b = src(1, ValuType::kB32);
      lanes([&](int l) { return out_f32(as_u32(std::ldexp(as_f32(in_f32(a[l])), std::clamp<int32_t>(int32_t(b[l]), -1000, 1000)))); }); break; }
    case op::V_FRACT_F32: F32_1(std::isinf(x0) ? std::nanf("") : std::min(x0 - std::floor(x0), 0x1.fffffep-1f))
    case op::V_TRUNC_F32: F32_1(std::trunc(x0))
    case op::V_CEIL_F32: F32_1(std::ceil(x0))
    case op::V_RNDNE_F32: F32_1(std::nearbyint(x0))
    case op::V_FLOOR_F32: F32_1(std::floor(x0))
    case op::V_FREXP_MANT_F32: F32_1((std::isinf(x0) || std::isnan(x0)) ? x0 : [&] { int e; return std::frexp(x0, &e); }())
    case op::V_FREXP_EXP_I32_F32: { const uint32_t* a = A(); lanes([&](int l) {
        const float f = as_f32(a[l]);
        if (std::isinf(f) || std::isnan(f)) return 0u;
        int e;
        std::frexp(f, &e);
        return uint32_t(e);
      }); break; }
    case op::V_EXP_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_exp_f32(a[l], w.mode)); }); break; }
    case op::V_LOG_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_log_f32(a[l], w.mode)); }); break; }
    case op::V_RCP_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_rcp_f32(a[l], w.mode)); }); break; }
    // The integer-division flavour differs only in the exception it signals (not modelled).
    case op::V_RCP_IFLAG_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_rcp_f32(a[l], w.mode)); }); break; }
    case op::V_RSQ_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_rsq_f32(a[l], w.mode)); }); break; }
    case op::V_SQRT_F32: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(v_sqrt_f32(a[l], w.mode)); }); break; }
    default: return Step::kOther;
  }
  return Step::kStore;
}

// Conversions.
ValuExec::Step ValuExec::run_convert() {
  const uint16_t v = in.valu;
  switch (in.valu) {
    // i32/u32 -> f32 rounds per MODE (CDNA4 pseudocode i32_to_f32 under ROUND_MODE); only
    // round-to-nearest-even is modelled, so any other mode is refused as for f32 arithmetic.
    case op::V_CVT_F32_I32: { check_round_mode(); const uint32_t* a = A(); lanes([&](int l) { return out_f32(as_u32(float(int32_t(a[l])))); }); break; }
    case op::V_CVT_F32_U32: { check_round_mode(); const uint32_t* a = A(); lanes([&](int l) { return out_f32(as_u32(float(a[l]))); }); break; }
    case op::V_CVT_U32_F32: { const uint32_t* a = A(); lanes([&](int l) {
        const float f = as_f32(a[l]);
        if (std::isnan(f) || f <= 0) return 0u;
        if (f >= 4294967296.0f) return 0xFFFFFFFFu;
        return uint32_t(f);
      }); break; }
    case op::V_CVT_I32_F32: { const uint32_t* a = A(); lanes([&](int l) {
        const float f = as_f32(a[l]);
        if (std::isnan(f)) return 0u;
        if (f >= 2147483648.0f) return 0x7FFFFFFFu;
        if (f <= -2147483648.0f) return 0x80000000u;
        return uint32_t(int32_t(f));
      }); break; }
    case op::V_CVT_RPI_I32_F32: { const uint32_t* a = A(); lanes([&](int l) { const float f = as_f32(a[l]);
      return std::isnan(f) ? 0u : uint32_t(int32_t(std::floor(double(f) + 0.5))); }); break; }
    case op::V_CVT_FLR_I32_F32: { const uint32_t* a = A(); lanes([&](int l) { const float f = as_f32(a[l]);
      return std::isnan(f) ? 0u : uint32_t(int32_t(std::floor(f))); }); break; }
    case op::V_CVT_F32_UBYTE0: case op::V_CVT_F32_UBYTE1: case op::V_CVT_F32_UBYTE2: case op::V_CVT_F32_UBYTE3: {
      const int sh = 8 * (v - op::V_CVT_F32_UBYTE0); const uint32_t* a = src(0, ValuType::kB32);
      lanes([&](int l) { return out_f32(as_u32(float((a[l] >> sh) & 0xFF))); }); break; }
    case op::V_CVT_F16_F32: { const uint32_t* a = A(); lanes([&](int l) { return uint32_t(f32_to_f16(as_f32(in_f32(a[l])))); });
      break; }
    case op::V_CVT_F32_F16: { const uint32_t* a = A(); lanes([&](int l) { return out_f32(as_u32(f16_to_f32(uint16_t(a[l])))); }); break; }
    case op::V_CVT_F32_F64: { check_round_mode(); uint64_t a[kLanes]; src64(0, a, ValuType::kF64);
      lanes([&](int l) { return out_f32(as_u32(float(as_f64(a[l])))); }); break; }
    case op::V_CVT_F32_BF16: { const uint32_t* a = src(0, ValuType::kB32); lanes([&](int l) { return (a[l] & 0xFFFF) << 16; }); break; }
    case op::V_CVT_PKRTZ_F16_F32: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { return cvt_pkrtz_f16_f32(a[l], b[l], w.mode); }); break; }
    case op::V_CVT_PK_F16_F32: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { return uint32_t(f32_to_f16(as_f32(in_f32(a[l])))) | (uint32_t(f32_to_f16(as_f32(in_f32(b[l])))) << 16); }); break; }
    case op::V_CVT_PK_BF16_F32: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { return cvt_pk_bf16_f32(a[l], b[l], w.mode); }); break; }
    case op::V_CVT_PK_FP8_F32: case op::V_CVT_PK_BF8_F32: {
      const uint32_t* a = A(); const uint32_t* b = B();
      const bool hi = (in.opsel >> 3) & 1;
      const uint32_t d = in.dst - operand::kVgpr0;
      x.hazard_check_read_vgpr(d, false, false);
      const uint32_t* old = x.vreg_read(d);
      lanes([&](int l) { return v == op::V_CVT_PK_FP8_F32 ? cvt_pk_fp8_f32(a[l], b[l], old[l], hi, w.mode)
                                                         : cvt_pk_bf8_f32(a[l], b[l], old[l], hi, w.mode); });
      store();
      if (hi) mark_partial_write();
      return Step::kWritten;
    }
    case op::V_CVT_F32_FP8: case op::V_CVT_F32_BF8: {
      const uint32_t* a = x.vsrc(in.src[0], tmp[0]);  // byte selected by SDWA src0_sel or op_sel
      int sel = 0;
      if (in.is_sdwa) sel = in.sdwa.src0_sel <= 3 ? in.sdwa.src0_sel : 0;
      // The CDNA4 pseudocode selects the byte only through SDWA_SRC0_SEL; how the VOP3 form's
      // op_sel bits map to a byte is not documented for gfx950 (LLVM encodes a byte_sel with
      // its bits in reverse order on later targets), so a VOP3 byte select is refused.
      else if (is_vop3 && (in.opsel & 3))
        x.fault(fmt::format("{} with a VOP3 op_sel byte select is not modelled (undocumented bit order)", in.name));
      lanes([&](int l) { return v == op::V_CVT_F32_FP8 ? cvt_f32_fp8(a[l], sel) : cvt_f32_bf8(a[l], sel); });
      // The SDWA source select was consumed above (it picks the byte).
      store();
      return Step::kWritten;
    }
    case op::V_CVT_PK_F32_FP8: case op::V_CVT_PK_F32_BF8: {
      const uint32_t* a = x.vsrc(in.src[0], tmp[0]);
      bool hi = false;
      if (in.is_sdwa) hi = in.sdwa.src0_sel == 5;
      // As above: the pseudocode names only SDWA_SRC0_SEL for the word.
      else if (is_vop3 && (in.opsel & 3))
        x.fault(fmt::format("{} with a VOP3 op_sel word select is not modelled (undocumented)", in.name));
      uint32_t lo_r[kLanes], hi_r[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const F32Pair p = v == op::V_CVT_PK_F32_FP8 ? cvt_pk_f32_fp8(a[l], hi) : cvt_pk_f32_bf8(a[l], hi);
        lo_r[l] = p.lo; hi_r[l] = p.hi;
      }
      store_pair(lo_r, hi_r);
      return Step::kWritten;
    }
    case op::V_CVT_SCALEF32_PK_FP8_F32: case op::V_CVT_SCALEF32_PK_BF8_F32: {
      const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* sc = C();
      const bool hi = (in.opsel >> 3) & 1;
      const uint32_t d = in.dst - operand::kVgpr0;
      x.hazard_check_read_vgpr(d, false, false);
      const uint32_t* old = x.vreg_read(d);
      lanes([&](int l) { return v == op::V_CVT_SCALEF32_PK_FP8_F32 ? cvt_scalef32_pk_fp8_f32(a[l], b[l], sc[l], old[l], hi, w.mode)
                                                                  : cvt_scalef32_pk_bf8_f32(a[l], b[l], sc[l], old[l], hi, w.mode); });
      store();
      mark_partial_write();  // cvt_scale F32->F8 results need 1 wait state before use
      return Step::kWritten;
    }
    case op::V_CVT_SCALEF32_F32_FP8: case op::V_CVT_SCALEF32_F32_BF8: {
      const uint32_t* a = src(0, ValuType::kB32); const uint32_t* sc = src(1, ValuType::kF32);
      const int sel = in.opsel & 3;
      lanes([&](int l) { return v == op::V_CVT_SCALEF32_F32_FP8 ? cvt_scalef32_f32_fp8(a[l], sc[l], sel)
                                                               : cvt_scalef32_f32_bf8(a[l], sc[l], sel); });
      break;
    }
    case op::V_CVT_SCALEF32_PK_F32_FP8: case op::V_CVT_SCALEF32_PK_F32_BF8: {
      const uint32_t* a = src(0, ValuType::kB32); const uint32_t* sc = src(1, ValuType::kF32);
      const bool hi = in.opsel & 1;
      uint32_t lo_r[kLanes], hi_r[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const F32Pair p = v == op::V_CVT_SCALEF32_PK_F32_FP8 ? cvt_scalef32_pk_f32_fp8(a[l], sc[l], hi)
                                                             : cvt_scalef32_pk_f32_bf8(a[l], sc[l], hi);
        lo_r[l] = p.lo; hi_r[l] = p.hi;
      }
      store_pair(lo_r, hi_r);
      return Step::kWritten;
    }
    default: return Step::kOther;
  }
  return Step::kStore;
}

// 32-bit integer and packing.
ValuExec::Step ValuExec::run_integer() {
  const uint16_t v = in.valu;
  switch (in.valu) {
    case op::V_ADD_U32: { const uint32_t* a = A(); const uint32_t* b = B(); const bool cl = is_vop3 && in.clamp;
      lanes([&](int l) { const uint64_t r = uint64_t(a[l]) + b[l]; return cl && (r >> 32) ? 0xFFFFFFFFu : uint32_t(r); }); break; }
    case op::V_SUB_U32: { const uint32_t* a = A(); const uint32_t* b = B(); const bool cl = is_vop3 && in.clamp;
      lanes([&](int l) { return cl && b[l] > a[l] ? 0u : a[l] - b[l]; }); break; }
    case op::V_SUBREV_U32: { const uint32_t* a = A(); const uint32_t* b = B(); const bool cl = is_vop3 && in.clamp;
      lanes([&](int l) { return cl && a[l] > b[l] ? 0u : b[l] - a[l]; }); break; }
    case op::V_ADD_I32: U32_2(uint32_t(int32_t(u0) + int64_t(int32_t(u1))))
    case op::V_SUB_I32: U32_2(uint32_t(int32_t(u0) - int64_t(int32_t(u1))))
    case op::V_ADD_CO_U32: case op::V_SUB_CO_U32: case op::V_SUBREV_CO_U32:
    case op::V_ADDC_CO_U32: case op::V_SUBB_CO_U32: case op::V_SUBBREV_CO_U32: {
      const uint32_t* a = A(); const uint32_t* b = B();
      const bool with_carry_in = v == op::V_ADDC_CO_U32 || v == op::V_SUBB_CO_U32 || v == op::V_SUBBREV_CO_U32;
      const uint16_t ccode = is_vop3 ? in.src[2] : operand::kVccLo;
      if (with_carry_in) x.hazard_check_valu_sgpr_read(ccode, 2);
      const uint64_t cin = with_carry_in ? x.sread64(ccode) : 0;
      uint64_t cout = 0;
      lanes([&](int l) {
        const uint64_t ci = (cin >> l) & 1;
        uint64_t r; bool c;
        switch (v) {
          case op::V_ADD_CO_U32: case op::V_ADDC_CO_U32: r = uint64_t(a[l]) + b[l] + ci; c = r >> 32; break;
          case op::V_SUB_CO_U32: case op::V_SUBB_CO_U32: r = uint64_t(a[l]) - b[l] - ci; c = uint64_t(b[l]) + ci > a[l]; break;
          default: r = uint64_t(b[l]) - a[l] - ci; c = uint64_t(a[l]) + ci > b[l]; break;
        }
        if (c) cout |= 1ull << l;
        return uint32_t(r);
      });
      store();
      write_sgpr_mask(is_vop3 ? in.sdst : operand::kVccLo, cout);
      return Step::kWritten;
    }
    case op::V_MUL_LO_U32: U32_2(u0 * u1)
    case op::V_MUL_HI_U32: U32_2((uint64_t(u0) * u1) >> 32)
    case op::V_MUL_HI_I32: U32_2(uint64_t(int64_t(int32_t(u0)) * int32_t(u1)) >> 32)
    case op::V_MUL_I32_I24: U32_2(int32_t(uint32_t(int32_t(u0 << 8) >> 8) * uint32_t(int32_t(u1 << 8) >> 8)))
    case op::V_MUL_HI_I32_I24: U32_2(uint64_t(int64_t(int32_t(u0 << 8) >> 8) * int64_t(int32_t(u1 << 8) >> 8)) >> 32)
    case op::V_MUL_U32_U24: U32_2((u0 & 0xFFFFFF) * (u1 & 0xFFFFFF))
    case op::V_MUL_HI_U32_U24: U32_2((uint64_t(u0 & 0xFFFFFF) * (u1 & 0xFFFFFF)) >> 32)
    case op::V_MAD_U32_U24: U32_3((u0 & 0xFFFFFF) * (u1 & 0xFFFFFF) + u2)
    case op::V_MAD_I32_I24: U32_3(uint32_t(int32_t(u0 << 8) >> 8) * uint32_t(int32_t(u1 << 8) >> 8) + u2)
    case op::V_MIN_I32: U32_2(int32_t(u0) < int32_t(u1) ? u0 : u1)
    case op::V_MAX_I32: U32_2(int32_t(u0) > int32_t(u1) ? u0 : u1)
    case op::V_MIN_U32: U32_2(u0 < u1 ? u0 : u1)
    case op::V_MAX_U32: U32_2(u0 > u1 ? u0 : u1)
    case op::V_MIN3_I32: U32_3(std::min(std::min(int32_t(u0), int32_t(u1)), int32_t(u2)))
    case op::V_MAX3_I32: U32_3(std::max(std::max(int32_t(u0), int32_t(u1)), int32_t(u2)))
    case op::V_MIN3_U32: U32_3(std::min(std::min(u0, u1), u2))
    case op::V_MAX3_U32: U32_3(std::max(std::max(u0, u1), u2))
    case op::V_MED3_I32: U32_3(std::max(std::min(int32_t(u0), int32_t(u1)), std::min(std::max(int32_t(u0), int32_t(u1)), int32_t(u2))))
    case op::V_MED3_U32: U32_3(std::max(std::min(u0, u1), std::min(std::max(u0, u1), u2)))
    case op::V_LSHRREV_B32: U32_2(u1 >> (u0 & 31))
    case op::V_ASHRREV_I32: U32_2(int32_t(u1) >> (u0 & 31))
    case op::V_LSHLREV_B32: U32_2(u1 << (u0 & 31))
    case op::V_AND_B32: U32_2(u0 & u1)
    case op::V_OR_B32: U32_2(u0 | u1)
    case op::V_XOR_B32: U32_2(u0 ^ u1)
    case op::V_XNOR_B32: U32_2(~(u0 ^ u1))
    case op::V_NOT_B32: U32_1(~u0)
    case op::V_BFREV_B32: { const uint32_t* a = A(); lanes([&](int l) { uint32_t r = 0; for (int i = 0; i < 32; ++i) r |= ((a[l] >> i) & 1u) << (31 - i); return r; }); break; }
    case op::V_FFBH_U32: U32_1(u0 ? clz32(u0) : -1)
    case op::V_FFBL_B32: U32_1(u0 ? ctz32(u0) : -1)
    case op::V_FFBH_I32: U32_1(((int32_t(u0) < 0 ? ~u0 : u0) == 0) ? -1 : clz32(int32_t(u0) < 0 ? ~u0 : u0))
    case op::V_BFE_U32: U32_3(((u2 & 31) == 0) ? 0 : ((u0 >> (u1 & 31)) & ((u2 & 31) == 32 ? ~0u : ((1u << (u2 & 31)) - 1))))
    case op::V_BFE_I32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C();
      lanes([&](int l) { const uint32_t width = c[l] & 31, off = b[l] & 31; if (!width) return 0u;
        const uint32_t r = (a[l] >> off) & ((1u << width) - 1);
        return (r >> (width - 1)) & 1 ? r | ~((1u << width) - 1) : r; }); break; }
    case op::V_BFI_B32: U32_3((u0 & u1) | (~u0 & u2))
    case op::V_BFM_B32: U32_2(((1u << (u0 & 31)) - 1) << (u1 & 31))
    case op::V_ALIGNBIT_B32: U32_3(uint32_t(((uint64_t(u0) << 32) | u1) >> (u2 & 31)))
    case op::V_ALIGNBYTE_B32: U32_3(uint32_t(((uint64_t(u0) << 32) | u1) >> (8 * (u2 & 3))))
    case op::V_PERM_B32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C();
      if (perm_uniform(a, b, c, res)) break;
      lanes([&](int l) { return perm_b32(a[l], b[l], c[l]); });
      break; }
    case op::V_LSHL_ADD_U32: U32_3((u0 << (u1 & 31)) + u2)
    case op::V_ADD_LSHL_U32: U32_3((u0 + u1) << (u2 & 31))
    case op::V_ADD3_U32: U32_3(u0 + u1 + u2)
    case op::V_LSHL_OR_B32: U32_3((u0 << (u1 & 31)) | u2)
    case op::V_AND_OR_B32: U32_3((u0 & u1) | u2)
    case op::V_OR3_B32: U32_3(u0 | u1 | u2)
    case op::V_XAD_U32: U32_3((u0 ^ u1) + u2)
    case op::V_BITOP3_B32: { const uint32_t* a = A(); const uint32_t* b = B(); const uint32_t* c = C();
      // The 8-bit truth table is split over neg (bits 2:0), abs (5:3) and omod (7:6), as
      // llvm-objdump decodes it: 'bitop3:0x78' is abs 7, omod 1, neg 0; 'bitop3:0x36' is
      // neg 6, abs 6, omod 0.
      const uint32_t ttbl = (in.neg & 7) | ((in.abs & 7) << 3) | ((in.omod & 3) << 6);
      lanes([&](int l) LANE { return bitop3_b32(a[l], b[l], c[l], ttbl); });
      break; }
    case op::V_BCNT_U32_B32: U32_2(popcnt(u0) + u1)
    case op::V_MBCNT_LO_U32_B32: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { const uint32_t below = l >= 32 ? ~0u : ((1u << l) - 1); return uint32_t(popcnt(a[l] & below)) + b[l]; }); break; }
    case op::V_MBCNT_HI_U32_B32: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { const uint32_t below = l < 32 ? 0u : (l == 63 ? 0x7FFFFFFFu : ((1u << (l - 32)) - 1)); return uint32_t(popcnt(a[l] & below)) + b[l]; }); break; }
    case op::V_CVT_PK_U16_U32: U32_2((std::min(u0, 0xFFFFu)) | (std::min(u1, 0xFFFFu) << 16))
    case op::V_CVT_PK_I16_I32: U32_2((uint32_t(std::clamp<int32_t>(int32_t(u0), -32768, 32767)) & 0xFFFF) |
                                     (uint32_t(std::clamp<int32_t>(int32_t(u1), -32768, 32767)) << 16))
    case op::V_PACK_B32_F16: { const uint32_t* a = A(); const uint32_t* b = B();
      const int s0 = in.opsel & 1, s1 = (in.opsel >> 1) & 1;
      lanes([&](int l) { return ((a[l] >> (16 * s0)) & 0xFFFF) | (((b[l] >> (16 * s1)) & 0xFFFF) << 16); }); break; }
    default: return Step::kOther;
  }
  return Step::kStore;
}

// 16-bit.
ValuExec::Step ValuExec::run_16bit() {
  switch (in.valu) {
    case op::V_ADD_U16: U32_2((u0 + u1) & 0xFFFF)
    case op::V_SUB_U16: U32_2((u0 - u1) & 0xFFFF)
    case op::V_SUBREV_U16: U32_2((u1 - u0) & 0xFFFF)
    case op::V_MUL_LO_U16: U32_2((u0 * u1) & 0xFFFF)
    case op::V_LSHLREV_B16: U32_2((u1 << (u0 & 15)) & 0xFFFF)
    case op::V_LSHRREV_B16: U32_2((u1 & 0xFFFF) >> (u0 & 15))
    case op::V_ASHRREV_I16: U32_2(uint32_t(int16_t(u1) >> (u0 & 15)) & 0xFFFF)
    case op::V_MAX_U16: U32_2(std::max(u0 & 0xFFFF, u1 & 0xFFFF))
    case op::V_MIN_U16: U32_2(std::min(u0 & 0xFFFF, u1 & 0xFFFF))
    case op::V_MAX_I16: U32_2(uint32_t(std::max(int16_t(u0), int16_t(u1))) & 0xFFFF)
    case op::V_MIN_I16: U32_2(uint32_t(std::min(int16_t(u0), int16_t(u1))) & 0xFFFF)
    case op::V_ADD_F16: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { return uint32_t(f32_to_f16(f16_to_f32(uint16_t(a[l])) + f16_to_f32(uint16_t(b[l])))); }); break; }
    case op::V_MUL_F16: { const uint32_t* a = A(); const uint32_t* b = B();
      lanes([&](int l) { return uint32_t(f32_to_f16(f16_to_f32(uint16_t(a[l])) * f16_to_f32(uint16_t(b[l])))); }); break; }
    default: return Step::kOther;
  }
  return Step::kStore;
}

#undef F32_1
#undef F32_2
#undef F32_3
#undef U32_1
#undef U32_2
#undef U32_3


void execute_valu(Executor& x) {
  ValuExec e(x);
  e.run();
  // clamp/omod on an instruction that did not apply them (conversions with their own result
  // paths, carry-out adds, FP8 packing, ...) would be silently ignored: refused instead.
  // v_bitop3 reuses the omod bits for its truth table.
  const Instruction& in = x.inst();
  const bool clamp = in.enc == Encoding::kVop3 ? in.clamp : in.is_sdwa ? in.sdwa.clamp : false;
  const uint8_t omod = in.enc == Encoding::kVop3 ? in.omod : in.is_sdwa ? in.sdwa.omod : 0;
  if ((clamp || omod) && e.write_mask && !e.output_modifiers_applied && in.valu != op::V_BITOP3_B32 && in.valu != op::V_BITOP3_B16)
    x.fault(fmt::format("{} on {} is not modelled", clamp ? "clamp" : "omod", in.name));
}

}  // namespace zyfa::emu
