// VOP3P: packed math (v_pk_*_f32, v_pk_*_f16/u16), v_accvgpr_read/write, and the MFMAs
// (VOP3P-MAI, incl. the two-dword-pair v_mfma_scale_* form). MFMA arithmetic and layouts are
// semantics/mfma.cpp; this file gathers the operands from the register files, checks the
// dependency wait states and writes the result.
// Sources: AMD CDNA4 ISA "Matrix Arithmetic Instructions" and "Dependency Resolution: Required
// Independent Instructions"; LLVM GCNHazardRecognizer.cpp (checkMAIHazards90A); VOP3P op_sel
// rules from the CDNA4 ISA "VOP3P" section (op_sel picks the source half/dword of the low
// result, op_sel_hi that of the high result).
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/core/fp_bits.h"
#include "emu/isa/isa_ops.h"
#include "emu/semantics/mfma.h"

namespace zyfa::emu {
namespace {

// Unified register index of operand code `code` in a MAI instruction: VGPR n or AGPR n.
uint32_t mai_reg(uint16_t code, bool agpr) { return (code - operand::kVgpr0) + (agpr ? kAgprBase : 0); }

void check_valu_then_mfma(Executor& x, uint32_t reg, const char* role) {
  Wave& w = x.wave();
  const uint64_t t = w.valu_vgpr_write_clock[reg];
  if (t && wait_states_after_stamp(w, t) < 2)
    x.fault(fmt::format("MFMA hazard: {} {}{} read by an MFMA less than 2 wait states after a VALU write", role,
                        reg >= kAgprBase ? "a" : "v", reg % 256));
}

// One half of v_pk_fma/mul/add_f32 over all 64 lanes (inactive ones are not stored later).
struct PackedF32 {
  const uint32_t* src[3] = {nullptr, nullptr, nullptr};
  uint32_t neg[3] = {0, 0, 0};
  bool flush_in = true, flush_out = true;
};

template <int kOp>
inline __attribute__((always_inline)) void packed_f32_lanes(const PackedF32& p, uint32_t* out) {
  for (int l = 0; l < kLanes; ++l) {
    uint32_t v[3] = {0, 0, 0};
    for (int i = 0; i < (kOp == 0 ? 3 : 2); ++i) {
      v[i] = p.src[i][l] ^ p.neg[i];
      if (p.flush_in) v[i] = flush32(v[i]);
    }
    uint32_t res;
    if (kOp == 0) res = as_u32(std::fma(as_f32(v[0]), as_f32(v[1]), as_f32(v[2])));
    else if (kOp == 1) res = as_u32(as_f32(v[0]) * as_f32(v[1]));
    else res = as_u32(as_f32(v[0]) + as_f32(v[1]));
    out[l] = p.flush_out ? flush32(res) : res;
  }
}

// Built twice: with the host's FMA instructions where it has them (a fused multiply-add is
// one correctly rounded operation, so the bits are those of the library's fmaf), and plain.
template <int kOp>
void packed_f32_generic(const PackedF32& p, uint32_t* out) { packed_f32_lanes<kOp>(p, out); }
#if defined(__x86_64__)
template <int kOp>
__attribute__((target("avx2,fma"))) void packed_f32_fma(const PackedF32& p, uint32_t* out) {
  packed_f32_lanes<kOp>(p, out);
}
#endif

template <int kOp>
void packed_f32_op(const PackedF32& p, uint32_t* out) {
#if defined(__x86_64__)
  static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (fma) return packed_f32_fma<kOp>(p, out);
#endif
  packed_f32_generic<kOp>(p, out);
}

void packed_f32(uint16_t o, const PackedF32& p, uint32_t* out) {
  if (o == op::V_PK_FMA_F32) packed_f32_op<0>(p, out);
  else if (o == op::V_PK_MUL_F32) packed_f32_op<1>(p, out);
  else packed_f32_op<2>(p, out);
}

void exec_packed(Executor& x) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  const uint64_t exec = w.exec();
  if (in.src[0] < operand::kVgpr0 && in.op != op::V_PK_MOV_B32 && in.op != op::V_PK_FMA_F32 &&
      in.op != op::V_PK_MUL_F32 && in.op != op::V_PK_ADD_F32) {
    // Scalar/constant sources of 16-bit packed ops: handled by the generic path below.
  }
  auto dst_pair = [&](uint32_t* lo_out[2]) {
    const uint32_t d = in.dst - operand::kVgpr0;
    lo_out[0] = x.vdst(d);
    lo_out[1] = x.vdst(d + 1);
    w.valu_vgpr_write_clock[d] = w.valu_vgpr_write_clock[d + 1] = w.clock + 1;
  };
  // 64-bit register-pair sources of the packed f32 ops: lane values of both dwords.
  auto pair = [&](int i, uint32_t (*out)[kLanes]) {
    const uint16_t code = in.src[i];
    if (code >= operand::kVgpr0) {
      const uint32_t r = code - operand::kVgpr0;
      x.hazard_check_read_vgpr(r, false, false);
      x.hazard_check_read_vgpr(r + 1, false, false);
      std::memcpy(out[0], x.vreg_read(r), sizeof(out[0]));
      std::memcpy(out[1], x.vreg_read(r + 1), sizeof(out[1]));
    } else if (code < 128) {
      const uint64_t v = x.sread64(code);
      for (int l = 0; l < kLanes; ++l) { out[0][l] = uint32_t(v); out[1][l] = uint32_t(v >> 32); }
    } else {
      // Inline constants and literals of the packed-f32 forms: the CDNA4 ISA does not say
      // what the second dword of a 64-bit packed source holds for them (LLVM treats the
      // operand as a 32-bit inline value; the generic 64-bit path would give the f64 bit
      // pattern). Refused rather than guessed.
      x.fault(fmt::format("{} with an inline constant or literal source is not modelled (the ISA does not "
                          "define the high dword)", in.name));
    }
  };
  switch (in.op) {
    case op::V_PK_FMA_F32: case op::V_PK_MUL_F32: case op::V_PK_ADD_F32: case op::V_PK_MOV_B32: {
      if (w.mode & 0xF) x.fault("MODE round mode other than round-to-nearest-even is not modelled");
      const int nsrc = in.op == op::V_PK_FMA_F32 ? 3 : 2;
      uint32_t s[3][2][kLanes];
      for (int i = 0; i < nsrc; ++i) pair(i, s[i]);
      uint32_t* d[2];
      uint32_t r[2][kLanes];
      if (in.op == op::V_PK_MOV_B32) {
        // v_pk_mov_b32: low result from src0 (dword op_sel[0]), high from src1 (op_sel[1]).
        for (int half = 0; half < 2; ++half) {
          const int sel = half == 0 ? (in.opsel & 1) : ((in.opsel >> 1) & 1);
          std::memcpy(r[half], s[half][sel], sizeof(r[half]));
        }
      } else {
        // Per half: the dword op_sel/op_sel_hi picks of each source and its neg bit; f32
        // denormals follow MODE as for the other f32 VALU operations (inputs bit 4, results
        // bit 5 of MODE.FP_DENORM).
        for (int half = 0; half < 2; ++half) {
          PackedF32 p;
          for (int i = 0; i < nsrc; ++i) {
            const int sel = half == 0 ? (in.opsel >> i) & 1 : (in.opsel_hi >> i) & 1;
            const bool neg = half == 0 ? (in.neg >> i) & 1 : (in.neg_hi >> i) & 1;
            p.src[i] = s[i][sel];
            p.neg[i] = neg ? 0x80000000u : 0u;
          }
          p.flush_in = !(w.mode & (1u << 4));
          p.flush_out = !(w.mode & (1u << 5));
          packed_f32(in.op, p, r[half]);
        }
      }
      if (in.clamp) x.fault(fmt::format("clamp on {} is not modelled", in.name));
      dst_pair(d);
      for (int l = 0; l < kLanes; ++l)
        if ((exec >> l) & 1) { d[0][l] = r[0][l]; d[1][l] = r[1][l]; }
      return;
    }
    default: break;
  }
  // 16-bit packed ops: halves chosen by op_sel (low result) and op_sel_hi (high result).
  uint32_t tmp[3][kLanes];
  const uint32_t* s[3] = {nullptr, nullptr, nullptr};
  const int nsrc = (in.op == op::V_PK_FMA_F16 || in.op == op::V_PK_MAD_U16 || in.op == op::V_PK_MAD_I16) ? 3 : 2;
  for (int i = 0; i < nsrc; ++i) s[i] = x.vsrc(in.src[i], tmp[i], Executor::OpType::kF16);
  const uint32_t d = in.dst - operand::kVgpr0;
  uint32_t res[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint32_t out = 0;
    for (int half = 0; half < 2; ++half) {
      uint16_t v[3];
      for (int i = 0; i < nsrc; ++i) {
        const int sel = half == 0 ? (in.opsel >> i) & 1 : (in.opsel_hi >> i) & 1;
        v[i] = uint16_t(s[i][l] >> (16 * sel));
        const bool neg = half == 0 ? (in.neg >> i) & 1 : (in.neg_hi >> i) & 1;
        if (neg) v[i] ^= 0x8000;
      }
      uint16_t r;
      switch (in.op) {
        case op::V_PK_ADD_F16: r = f32_to_f16(f16_to_f32(v[0]) + f16_to_f32(v[1])); break;
        case op::V_PK_MUL_F16: r = f32_to_f16(f16_to_f32(v[0]) * f16_to_f32(v[1])); break;
        case op::V_PK_FMA_F16: r = f32_to_f16(float(double(f16_to_f32(v[0])) * f16_to_f32(v[1]) + f16_to_f32(v[2]))); break;
        case op::V_PK_ADD_U16: r = uint16_t(v[0] + v[1]); break;
        case op::V_PK_SUB_U16: r = uint16_t(v[0] - v[1]); break;
        case op::V_PK_MUL_LO_U16: r = uint16_t(v[0] * v[1]); break;
        case op::V_PK_LSHLREV_B16: r = uint16_t(v[1] << (v[0] & 15)); break;
        case op::V_PK_LSHRREV_B16: r = uint16_t(v[1] >> (v[0] & 15)); break;
        case op::V_PK_MAX_U16: r = std::max(v[0], v[1]); break;
        case op::V_PK_MIN_U16: r = std::min(v[0], v[1]); break;
        default: x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
      }
      out |= uint32_t(r) << (16 * half);
    }
    res[l] = out;
  }
  if (in.clamp) x.fault(fmt::format("clamp on {} is not modelled", in.name));
  uint32_t* dp = x.vdst(d);
  w.valu_vgpr_write_clock[d] = w.clock + 1;
  for (int l = 0; l < kLanes; ++l)
    if ((exec >> l) & 1) dp[l] = res[l];
}

}  // namespace

void execute_mfma(Executor& x) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  const auto mop = mfma_op_from_opcode(in.op, in.scaled);
  if (!mop) x.fault(fmt::format("MFMA {} is not implemented by the emulator", in.name));
  MfmaInfo info;
  try {
    info = mfma_info(*mop, in.cbsz, in.blgp);
  } catch (const std::exception& e) {
    x.fault(e.what());
  }
  if (in.src[0] < operand::kVgpr0 || in.src[1] < operand::kVgpr0)
    x.fault("MFMA SrcA/SrcB must be registers");
  const bool a_acc = in.acc & 1, b_acc = (in.acc >> 1) & 1;
  const uint32_t a0 = mai_reg(in.src[0], a_acc), b0 = mai_reg(in.src[1], b_acc);
  const uint32_t d0 = mai_reg(in.dst, in.acc_cd);
  const bool c_is_reg = in.src[2] >= operand::kVgpr0;
  const uint32_t c0 = c_is_reg ? mai_reg(in.src[2], in.acc_cd) : 0;
  // Whole operand ranges inside the allocation before any register or scoreboard is touched.
  x.check_reg_range(a0, info.a_regs, "MFMA SrcA reads");
  x.check_reg_range(b0, info.b_regs, "MFMA SrcB reads");
  if (c_is_reg) x.check_reg_range(c0, info.d_regs, "MFMA SrcC reads");
  x.check_reg_range(d0, info.d_regs, "MFMA writes");

  // An MFMA computes one matrix product across the wave's lanes. The CDNA4 pseudocode ("D =
  // A * B + C") and LLVM say nothing about inactive lanes; LLVM does require 4 wait states
  // after a VALU write of EXEC; kernel code in AMD's libraries states that MFMAs ignore EXEC
  // on CDNA3, which no AMD document confirms for CDNA4. A partial EXEC is refused, so that no
  // kernel checked here depends on either reading.
  if (w.exec() != ~0ull)
    x.fault(fmt::format("{} with a partial EXEC (0x{:016x}) is not modelled: the ISA does not define the "
                        "matrix product with inactive lanes", in.name, w.exec()));
  // VALU writes EXEC, then an MFMA: 4 wait states.
  if (w.valu_exec_write_clock && wait_states_after_stamp(w, w.valu_exec_write_clock) < 4)
    x.fault("MFMA hazard: MFMA less than 4 wait states after a VALU write of EXEC");

  // Checks each register of an operand and returns the operand in place: the registers of a
  // range are consecutive physical registers, register-major as MfmaArgs::register_major
  // takes them, so nothing is copied.
  auto operand = [&](uint32_t first, int regs, const char* role, bool srcc) -> const uint32_t* {
    for (int r = 0; r < regs; ++r) {
      const uint32_t reg = first + r;
      const bool agpr = reg >= kAgprBase;
      if (srcc) {
        const MfmaWrite& m = w.mfma_write[reg];
        if (m.valid) {
          const MfmaWaitStates ws = mfma_wait_states(m.passes);
          const bool same = m.first == first && m.count == regs;
          const int need = same ? ws.srcc_same : ws.srcc_overlapped;
          const int64_t have = wait_states_after(w, m.clock);
          if (have < need)
            x.hazard_mfma("mfma-srcc", m.clock, have, need,
                          fmt::format("MFMA hazard: SrcC {}{} read {} wait state(s) after the {}-pass MFMA that "
                                      "writes it ({} SrcC); gfx950 requires {}", agpr ? "a" : "v", reg % 256, have,
                                      m.passes, same ? "same" : "overlapping", need));
        }
      } else {
        x.hazard_check_read_vgpr(reg, true, false);
      }
      check_valu_then_mfma(x, reg, role);
      if (agpr) x.areg_read(reg - kAgprBase);
      else x.vreg_read(reg);
    }
    return first >= kAgprBase ? w.areg(first - kAgprBase) : w.vreg(first);
  };
  thread_local std::array<uint32_t, 16 * kLanes> C;
  const uint32_t* A = operand(a0, info.a_regs, "SrcA", false);
  const uint32_t* B = operand(b0, info.b_regs, "SrcB", false);
  const uint32_t* Cp = C.data();
  if (c_is_reg) {
    Cp = operand(c0, info.d_regs, "SrcC", true);
  } else {
    uint32_t tmp[kLanes];
    const uint32_t v = x.vsrc(in.src[2], tmp)[0];
    std::fill(C.begin(), C.begin() + size_t(info.d_regs) * kLanes, v);
  }
  MfmaArgs args;
  args.op = *mop;
  args.a = A;
  args.b = B;
  args.c = Cp;
  args.register_major = true;
  args.cbsz = in.cbsz;
  args.abid = in.scaled ? 0 : in.abid;
  args.blgp = in.blgp;
  uint32_t SA[kLanes], SB[kLanes];
  if (in.scaled) {
    // Scale operands: a VGPR (one value per lane) or, as LLVM also accepts, an SGPR or
    // constant that every lane sees.
    for (int i = 0; i < 2; ++i) {
      uint32_t* out = i == 0 ? SA : SB;
      if (in.scale_src[i] >= operand::kVgpr0) {
        const uint32_t* row = operand(in.scale_src[i] - operand::kVgpr0, 1, i == 0 ? "scale A" : "scale B", false);
        std::memcpy(out, row, sizeof(SA));
      } else {
        uint32_t tmp[kLanes];
        const uint32_t* v = x.vsrc(in.scale_src[i], tmp);
        std::memcpy(out, v, sizeof(SA));
      }
    }
    args.scale_a = SA;
    args.scale_b = SB;
    args.scale_a_sel = in.scale_sel[0];
    args.scale_b_sel = in.scale_sel[1];
  }
  // Destination: every lane (MFMAs do not use EXEC). A previous MFMA still writing an
  // overlapping range that is not the same range is a WAW hazard like an overlapped SrcC.
  for (int r = 0; r < info.d_regs; ++r) {
    const uint32_t reg = d0 + r;
    const MfmaWrite& m = w.mfma_write[reg];
    if (m.valid && !(m.first == d0 && m.count == info.d_regs)) {
      const int need = mfma_wait_states(m.passes).srcc_overlapped;
      if (wait_states_after(w, m.clock) < need)
        x.hazard_mfma("mfma-srcc", m.clock, wait_states_after(w, m.clock), need,
                      fmt::format("MFMA hazard: MFMA writes {}{} while an earlier {}-pass MFMA writing an overlapping "
                                  "range is in flight (needs {} wait states)", reg >= kAgprBase ? "a" : "v", reg % 256,
                                  m.passes, need));
    }
    if (w.pending_total && w.pending_write[reg]) x.check_pending(reg, "overwrite");
    if (reg >= kAgprBase) x.adst(reg - kAgprBase);
    else x.vdst(reg);
  }
  // Checked before the product is computed, so it goes straight into the destination registers
  // (consecutive physical registers, register-major: the layout MfmaArgs::d takes; the
  // arithmetic reads all of A, B and C before it writes D, which may overlap them).
  args.d = d0 >= kAgprBase ? w.areg(d0 - kAgprBase) : w.vreg(d0);
  try {
    mfma_execute(args);
  } catch (const std::exception& e) {
    x.fault(e.what());
  }

  const uint64_t clock = w.clock;
  for (int r = 0; r < info.d_regs; ++r) {
    MfmaWrite& m = w.mfma_write[d0 + r];
    m.clock = clock;
    m.first = uint16_t(d0);
    m.count = uint16_t(info.d_regs);
    m.passes = uint8_t(info.passes);
    m.valid = true;
  }
  if (c_is_reg) {
    const int war = mfma_wait_states(info.passes).valu_war_srcc;
    for (int r = 0; r < info.d_regs; ++r) {
      w.mfma_srcc_read_until[c0 + r] = clock + war + 1;
      w.mfma_srcc_read_clock[c0 + r] = clock;
    }
  }
  w.any_mfma = true;
  w.last_mfma_clock = clock;
}

void execute_vop3p(Executor& x) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  const uint64_t exec = w.exec();
  switch (in.op) {
    case op::V_ACCVGPR_READ_B32: {
      const uint32_t s = in.src[0] - operand::kVgpr0;
      if (in.src[0] < operand::kVgpr0) x.fault("v_accvgpr_read_b32 source must be an AGPR");
      x.hazard_check_read_vgpr(kAgprBase + s, false, false);
      const uint32_t* src = x.areg_read(s);
      const uint32_t d = in.dst - operand::kVgpr0;
      uint32_t* dst = x.vdst(d);
      w.valu_vgpr_write_clock[d] = w.clock + 1;
      for (int l = 0; l < kLanes; ++l) if ((exec >> l) & 1) dst[l] = src[l];
      return;
    }
    case op::V_ACCVGPR_WRITE_B32: {
      uint32_t tmp[kLanes];
      const uint32_t* src = x.vsrc(in.src[0], tmp);
      const uint32_t d = in.dst - operand::kVgpr0;
      const uint32_t reg = kAgprBase + d;
      if (w.any_mfma) {
        const MfmaWrite& m = w.mfma_write[reg];
        if (m.valid) {
          const int need = mfma_wait_states(m.passes).srcab_or_valu_read;
          const int64_t have = wait_states_after(w, m.clock);
          if (have < need)
            x.hazard_mfma("mfma-overwrite", m.clock, have, need,
                          fmt::format("MFMA hazard: v_accvgpr_write of a{} {} wait state(s) after the {}-pass MFMA "
                                      "that writes it; gfx950 requires {}", d, have, m.passes, need));
        }
        if (w.mfma_srcc_read_until[reg] > w.clock)
          x.hazard_mfma_srcc_war(reg, fmt::format("MFMA hazard: v_accvgpr_write of a{} while an in-flight MFMA reads it "
                                                  "as SrcC", d));
      }
      uint32_t* dst = x.adst(d);
      w.valu_vgpr_write_clock[reg] = w.clock + 1;
      for (int l = 0; l < kLanes; ++l) if ((exec >> l) & 1) dst[l] = src[l];
      return;
    }
    default: break;
  }
  if (mfma_op_from_opcode(in.op, in.scaled)) {
    execute_mfma(x);
    return;
  }
  exec_packed(x);
}

}  // namespace zyfa::emu
