// gfx950 MFMA execution.
//
// Opcodes: the VOP3P OP field values come from AMD's machine-readable CDNA4 ISA (as generated
// into tinygrad runtime/autogen/amd/cdna/enum.py: VOP3POp, VOP3PX2Op) and agree with LLVM's
// gfx950 MC tests (e.g. v_mfma_f32_16x16x32_bf16 encodes 0xD3B5....: OP = 0x35 = 53;
// v_mfma_scale_f32_32x32x64_f8f6f4 is the pair v_mfma_ld_scale_b32 (OP 44) + OP 46).
//
// Pass counts (dependency wait states): LLVM's gfx950 scheduling model (llvm-mca gfx950 test:
// 16x16 shapes 4, 32x32 shapes 8) and, for the f8f6f4 family, gfx950-facts.md: an FP8/BF8
// operand doubles the passes (16x16x128: 8, 32x32x64: 16), FP6/FP4-only operands keep 4 / 8;
// this matches the MI355X peak rates (FP8 5 PF/s is half the FP6/FP4 rate of 10 PF/s).
//
// Numerics (the hardware's internal order and intermediate rounding are not documented, so the
// emulator fixes this one):
//  - every input element is decoded exactly as its format says (bf16, f16, OCP e4m3fn/e5m2,
//    MX e2m3/e3m2/e2m1); denormal inputs are kept, never flushed (an assumption: the sources
//    read say nothing of MFMA denormal handling, and the MODE denormal bits are documented for
//    VALU operations);
//  - every product is exact (and the E8M0 block scales are exact powers of two);
//  - K is split into blocks of 32 (the scale block of the f8f6f4 family; every other shape has
//    K <= 32 and is a single block); blocks are processed in increasing K; for each block the
//    emulator forms the exact value C_running + sum(products of the block) and rounds it once
//    to f32 (round to nearest even), which becomes C_running for the next block;
//  - denormal f32 results are kept; overflow gives infinity; any NaN (including a NaN E8M0
//    scale byte 0xFF, which poisons its whole block) gives the quiet NaN 0x7FC00000.
#include "emu/semantics/mfma.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu/semantics/convert.h"
#include "emu/semantics/exact_sum.h"
#include "emu/semantics/mfma_fast.h"
#include "emu/semantics/mfma_layout.h"

namespace zyfa::emu {
namespace {

using mfma_layout::Elem;

enum class Family { Fixed, F8F6F4 };

struct OpDesc {
  MfmaOp op;
  const char* name;
  uint32_t opcode;  // VOP3P OP field
  bool scaled;
  Family family;
  int m, n, k;
  Elem a, b;       // fixed-format families only
  int per_lane;    // elements of A (and B) per lane
  int passes;      // fixed-format families only
};

constexpr OpDesc kOps[] = {
    {MfmaOp::F32_16X16X32_BF16, "v_mfma_f32_16x16x32_bf16", 53, false, Family::Fixed, 16, 16, 32,
     Elem::BF16, Elem::BF16, 8, 4},
    {MfmaOp::F32_32X32X16_BF16, "v_mfma_f32_32x32x16_bf16", 55, false, Family::Fixed, 32, 32, 16,
     Elem::BF16, Elem::BF16, 8, 8},
    {MfmaOp::F32_16X16X16_BF16, "v_mfma_f32_16x16x16_bf16", 97, false, Family::Fixed, 16, 16, 16,
     Elem::BF16, Elem::BF16, 4, 4},
    {MfmaOp::F32_32X32X8_BF16, "v_mfma_f32_32x32x8_bf16", 96, false, Family::Fixed, 32, 32, 8,
     Elem::BF16, Elem::BF16, 4, 8},
    {MfmaOp::F32_16X16X32_F16, "v_mfma_f32_16x16x32_f16", 84, false, Family::Fixed, 16, 16, 32,
     Elem::F16, Elem::F16, 8, 4},
    {MfmaOp::F32_32X32X16_F16, "v_mfma_f32_32x32x16_f16", 85, false, Family::Fixed, 32, 32, 16,
     Elem::F16, Elem::F16, 8, 8},
    {MfmaOp::F32_16X16X16_F16, "v_mfma_f32_16x16x16_f16", 77, false, Family::Fixed, 16, 16, 16,
     Elem::F16, Elem::F16, 4, 4},
    {MfmaOp::F32_32X32X8_F16, "v_mfma_f32_32x32x8_f16", 76, false, Family::Fixed, 32, 32, 8,
     Elem::F16, Elem::F16, 4, 8},
    {MfmaOp::F32_16X16X32_FP8_FP8, "v_mfma_f32_16x16x32_fp8_fp8", 115, false, Family::Fixed, 16,
     16, 32, Elem::E4M3, Elem::E4M3, 8, 4},
    {MfmaOp::F32_16X16X32_FP8_BF8, "v_mfma_f32_16x16x32_fp8_bf8", 114, false, Family::Fixed, 16,
     16, 32, Elem::E4M3, Elem::E5M2, 8, 4},
    {MfmaOp::F32_16X16X32_BF8_FP8, "v_mfma_f32_16x16x32_bf8_fp8", 113, false, Family::Fixed, 16,
     16, 32, Elem::E5M2, Elem::E4M3, 8, 4},
    {MfmaOp::F32_16X16X32_BF8_BF8, "v_mfma_f32_16x16x32_bf8_bf8", 112, false, Family::Fixed, 16,
     16, 32, Elem::E5M2, Elem::E5M2, 8, 4},
    {MfmaOp::F32_32X32X16_FP8_FP8, "v_mfma_f32_32x32x16_fp8_fp8", 119, false, Family::Fixed, 32,
     32, 16, Elem::E4M3, Elem::E4M3, 8, 8},
    {MfmaOp::F32_32X32X16_FP8_BF8, "v_mfma_f32_32x32x16_fp8_bf8", 118, false, Family::Fixed, 32,
     32, 16, Elem::E4M3, Elem::E5M2, 8, 8},
    {MfmaOp::F32_32X32X16_BF8_FP8, "v_mfma_f32_32x32x16_bf8_fp8", 117, false, Family::Fixed, 32,
     32, 16, Elem::E5M2, Elem::E4M3, 8, 8},
    {MfmaOp::F32_32X32X16_BF8_BF8, "v_mfma_f32_32x32x16_bf8_bf8", 116, false, Family::Fixed, 32,
     32, 16, Elem::E5M2, Elem::E5M2, 8, 8},
    {MfmaOp::F32_16X16X128_F8F6F4, "v_mfma_f32_16x16x128_f8f6f4", 45, false, Family::F8F6F4, 16,
     16, 128, Elem::E4M3, Elem::E4M3, 32, 0},
    {MfmaOp::F32_32X32X64_F8F6F4, "v_mfma_f32_32x32x64_f8f6f4", 46, false, Family::F8F6F4, 32, 32,
     64, Elem::E4M3, Elem::E4M3, 32, 0},
    {MfmaOp::SCALE_F32_16X16X128_F8F6F4, "v_mfma_scale_f32_16x16x128_f8f6f4", 45, true,
     Family::F8F6F4, 16, 16, 128, Elem::E4M3, Elem::E4M3, 32, 0},
    {MfmaOp::SCALE_F32_32X32X64_F8F6F4, "v_mfma_scale_f32_32x32x64_f8f6f4", 46, true,
     Family::F8F6F4, 32, 32, 64, Elem::E4M3, Elem::E4M3, 32, 0},
};

const OpDesc& desc_of(MfmaOp op) {
  for (const OpDesc& d : kOps) {
    if (d.op == op) return d;
  }
  throw std::runtime_error("MFMA: unknown MfmaOp value " + std::to_string(static_cast<int>(op)));
}

Elem f8f6f4_format(const OpDesc& d, uint32_t field, const char* field_name) {
  switch (field) {
    case 0: return Elem::E4M3;
    case 1: return Elem::E5M2;
    case 2: return Elem::E2M3;
    case 3: return Elem::E3M2;
    case 4: return Elem::E2M1;
    default:
      throw std::runtime_error(std::string(d.name) + ": " + field_name + " = " +
                               std::to_string(field) +
                               " is not an operand format (0 e4m3, 1 e5m2, 2 e2m3, 3 e3m2, 4 e2m1)");
  }
}

struct Formats {
  Elem a, b;
};

Formats formats_of(const OpDesc& d, uint32_t cbsz, uint32_t blgp) {
  if (d.family == Family::F8F6F4) return {f8f6f4_format(d, cbsz, "cbsz"), f8f6f4_format(d, blgp, "blgp")};
  return {d.a, d.b};
}

int regs_for(int per_lane, Elem e) { return per_lane * mfma_layout::elem_bits(e) / 32; }

int passes_of(const OpDesc& d, const Formats& f) {
  if (d.family == Family::Fixed) return d.passes;
  const bool any_fp8 = mfma_layout::is_fp8(f.a) || mfma_layout::is_fp8(f.b);
  const int base = d.m == 16 ? 4 : 8;
  return any_fp8 ? 2 * base : base;
}

// One operand decoded into logical form, "mn-major": A as m x k (row i), B transposed as n x k
// (column j), so a block's dot product walks both contiguously. Per (row or column, K block)
// it keeps the range of significant-bit exponents of the nonzero elements and whether any
// element is infinite or NaN; products' bit ranges follow from these without touching terms.
struct Decoded {
  int k = 0, nblocks = 0, block = 0;
  std::vector<double> v;
  std::vector<int> msb, lsb;          // [mn * nblocks + p]; msb < lsb marks an all-zero block
  std::vector<uint8_t> nonfinite;     // [mn * nblocks + p]
};

constexpr int kEmptyMsb = -100000, kEmptyLsb = 100000;

// A decoded element with its significant-bit range, so the per-block bounds need no second pass.
struct ElemInfo {
  double v;
  int msb, lsb;
  uint8_t kind;  // 0 zero, 1 finite nonzero, 2 infinite or NaN
};

ElemInfo elem_info(double v) {
  ElemInfo e{v, kEmptyMsb, kEmptyLsb, 0};
  if (!std::isfinite(v)) {
    e.kind = 2;
  } else if (v != 0.0) {
    e.kind = 1;
    bit_span(v, &e.msb, &e.lsb);
  }
  return e;
}

// Every code of the narrow formats, decoded once.
struct NarrowInfo {
  std::array<ElemInfo, 256> e4m3, e5m2;
  std::array<ElemInfo, 64> e2m3, e3m2;
  std::array<ElemInfo, 16> e2m1;
  NarrowInfo() {
    for (uint32_t c = 0; c < 256; ++c) {
      e4m3[c] = elem_info(mfma_layout::decode(Elem::E4M3, c));
      e5m2[c] = elem_info(mfma_layout::decode(Elem::E5M2, c));
    }
    for (uint32_t c = 0; c < 64; ++c) {
      e2m3[c] = elem_info(mfma_layout::decode(Elem::E2M3, c));
      e3m2[c] = elem_info(mfma_layout::decode(Elem::E3M2, c));
    }
    for (uint32_t c = 0; c < 16; ++c) e2m1[c] = elem_info(mfma_layout::decode(Elem::E2M1, c));
  }
  const ElemInfo* table(Elem f) const {
    switch (f) {
      case Elem::E4M3: return e4m3.data();
      case Elem::E5M2: return e5m2.data();
      case Elem::E2M3: return e2m3.data();
      case Elem::E3M2: return e3m2.data();
      case Elem::E2M1: return e2m1.data();
      default: return nullptr;
    }
  }
};

const NarrowInfo& narrow_info() {
  static const NarrowInfo n;
  return n;
}

void gather_operand(const OpDesc& d, Elem fmt, const uint32_t* regs, bool is_a, int block,
                    Decoded& out) {
  const int mn = is_a ? d.m : d.n;
  const int nregs = regs_for(d.per_lane, fmt);
  const int bits = mfma_layout::elem_bits(fmt);
  // FP8 and FP6 operands of the f8f6f4 family hold two 16-element K chunks; FP4 holds 32
  // consecutive K (mfma_layout.cpp).
  const bool split = d.family == Family::F8F6F4 && fmt != Elem::E2M1;
  const ElemInfo* table = narrow_info().table(fmt);
  out.k = d.k;
  out.block = block;
  out.nblocks = d.k / block;
  out.v.assign(static_cast<size_t>(mn) * d.k, 0.0);
  out.msb.assign(static_cast<size_t>(mn) * out.nblocks, kEmptyMsb);
  out.lsb.assign(static_cast<size_t>(mn) * out.nblocks, kEmptyLsb);
  out.nonfinite.assign(static_cast<size_t>(mn) * out.nblocks, 0);
  for (int lane = 0; lane < 64; ++lane) {
    const uint32_t* lane_regs = regs + static_cast<size_t>(lane) * nregs;
    for (int e = 0; e < d.per_lane; ++e) {
      const mfma_layout::Pos p = mfma_layout::operand_pos(mn, d.k, d.per_lane, split, lane, e);
      const uint32_t code = mfma_layout::extract(lane_regs, bits, e);
      const ElemInfo x = table ? table[code] : elem_info(mfma_layout::decode(fmt, code));
      out.v[static_cast<size_t>(p.mn) * d.k + p.k] = x.v;
      if (x.kind == 0) continue;
      const size_t cell = static_cast<size_t>(p.mn) * out.nblocks + p.k / block;
      if (x.kind == 2) {
        out.nonfinite[cell] = 1;
      } else {
        out.msb[cell] = std::max(out.msb[cell], x.msb);
        out.lsb[cell] = std::min(out.lsb[cell], x.lsb);
      }
    }
  }
}

// Significant-bit exponents of a finite nonzero f32 given as bits.
void f32_bit_span(uint32_t bits, int* msb, int* lsb) {
  const int expf = static_cast<int>((bits >> 23) & 0xFF);
  uint32_t mant = bits & 0x7FFFFFu;
  int lsb_exp = -149;
  if (expf != 0) {
    mant |= 0x800000u;
    lsb_exp = expf - 150;
  }
  *lsb = lsb_exp + __builtin_ctz(mant);
  *msb = lsb_exp + 31 - __builtin_clz(mant);
}

// acc + scale * dot(a, b) over one K block, rounded once to f32 (RNE), exactly. `scale_exp` is
// the block's combined E8M0 exponent (0 for unscaled ops); `nan_scale` marks a 0xFF byte.
uint32_t accumulate_block(uint32_t acc_bits, const double* a, const double* b, int n,
                          int a_msb, int a_lsb, int b_msb, int b_lsb, bool nonfinite,
                          int scale_exp, bool nan_scale) {
  const float acc = f32_from_bits(acc_bits);
  const bool acc_finite = (acc_bits & 0x7F800000u) != 0x7F800000u;
  // 2^scale_exp as a double built from its exponent field (|scale_exp| <= 254: always normal).
  const uint64_t scale_field = static_cast<uint64_t>(scale_exp + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scale_field, sizeof scale);
  if (nan_scale) scale = std::numeric_limits<double>::quiet_NaN();
  if (!nonfinite && !nan_scale && acc_finite) {
    // Fast path: when the nonzero bits of acc and of every scaled product fit one 46-bit
    // window, every partial double sum of the <= 33 operands is exact, so the final cast to f32
    // is the only rounding. Product bits lie within [a_lsb + b_lsb, a_msb + b_msb + 1].
    int hi = kEmptyMsb, lo = kEmptyLsb;
    if (a_msb != kEmptyMsb && b_msb != kEmptyMsb) {
      hi = a_msb + b_msb + 1 + scale_exp;
      lo = a_lsb + b_lsb + scale_exp;
    }
    if (acc != 0.0f) {
      int m, l;
      f32_bit_span(acc_bits, &m, &l);
      hi = std::max(hi, m);
      lo = std::min(lo, l);
    }
    if (hi - lo <= 45) {
      // Exact in any order here, so four independent chains (n is a multiple of 4) keep the
      // adder pipeline busy instead of waiting on one dependency chain.
      double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
      for (int t = 0; t < n; t += 4) {
        d0 += a[t] * b[t];
        d1 += a[t + 1] * b[t + 1];
        d2 += a[t + 2] * b[t + 2];
        d3 += a[t + 3] * b[t + 3];
      }
      const double dot = (d0 + d1) + (d2 + d3);
      return bits_from_f32(static_cast<float>(static_cast<double>(acc) + dot * scale));
    }
  }
  std::array<double, 32> terms{};
  for (int t = 0; t < n; ++t) terms[t] = a[t] * b[t] * scale;
  return exact_f32_sum(acc, terms.data(), n);
}

void validate_fields(const OpDesc& d, const MfmaArgs& args) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error(std::string(d.name) + ": " + what);
  };
  if (!args.a || !args.b || !args.c || !args.d) fail("null register pointer");
  if (args.abid != 0) fail("abid = " + std::to_string(args.abid) + " (block broadcast) is not implemented");
  if (d.family == Family::Fixed && (args.cbsz != 0 || args.blgp != 0)) {
    fail("cbsz = " + std::to_string(args.cbsz) + ", blgp = " + std::to_string(args.blgp) +
         ": broadcast/lane-group patterns are not implemented for single-block MFMAs");
  }
  if (d.scaled) {
    if (!args.scale_a || !args.scale_b) fail("scale operands missing");
    if (args.scale_a_sel > 3 || args.scale_b_sel > 3) {
      fail("scale byte select out of range (a " + std::to_string(args.scale_a_sel) + ", b " +
           std::to_string(args.scale_b_sel) + ")");
    }
  }
}

}  // namespace

const char* mfma_name(MfmaOp op) { return desc_of(op).name; }
bool mfma_is_scaled(MfmaOp op) { return desc_of(op).scaled; }
bool mfma_is_f8f6f4(MfmaOp op) { return desc_of(op).family == Family::F8F6F4; }

MfmaInfo mfma_info(MfmaOp op, uint32_t cbsz, uint32_t blgp) {
  const OpDesc& d = desc_of(op);
  const Formats f = formats_of(d, cbsz, blgp);
  MfmaInfo info{};
  info.m = d.m;
  info.n = d.n;
  info.k = d.k;
  info.blocks = 1;
  info.a_regs = regs_for(d.per_lane, f.a);
  info.b_regs = regs_for(d.per_lane, f.b);
  info.d_regs = d.m * d.n / 64;
  info.passes = passes_of(d, f);
  return info;
}

int mfma_passes(MfmaOp op, uint32_t cbsz, uint32_t blgp) { return mfma_info(op, cbsz, blgp).passes; }

std::optional<MfmaOp> mfma_op_from_opcode(uint32_t opcode, bool scaled) {
  for (const OpDesc& d : kOps) {
    if (d.opcode == opcode && d.scaled == scaled) return d.op;
  }
  return std::nullopt;
}

uint32_t mfma_opcode(MfmaOp op) { return desc_of(op).opcode; }

MfmaWaitStates mfma_wait_states(int passes) {
  // LLVM GCNHazardRecognizer, gfx950 XDL producer (see gfx950-facts.md for the table):
  // overlapped SrcC: P+2; same SrcC: 0 (2 after a 2-pass producer); SrcA/B, VALU/VMEM/LDS/export
  // reads and VALU writes: P+3, plus one more on gfx950 for 4/8/16 passes; VALU WAR on SrcC: P-1.
  MfmaWaitStates w{};
  w.srcc_overlapped = passes + 2;
  w.srcc_same = passes == 2 ? 2 : 0;
  w.srcab_or_valu_read = passes + 3 + (passes != 2 ? 1 : 0);
  w.valu_war_srcc = passes - 1;
  return w;
}

void mfma_execute(const MfmaArgs& args) {
  const OpDesc& d = desc_of(args.op);
  validate_fields(d, args);
  const Formats f = formats_of(d, args.cbsz, args.blgp);
  // e4m3 x e4m3 (the FP8 attention kernels' MFMA) and bf16 x bf16 (the BF16 kernels') have
  // shorter exact routes (mfma_fast.cpp); they decline NaN/Inf operands and NaN scales, which
  // take the general path.
  const FastShape shape{d.m, d.n, d.k, d.k < 32 ? d.k : 32, d.per_lane,
                        d.family == Family::F8F6F4, d.scaled};
  if (f.a == Elem::E4M3 && f.b == Elem::E4M3 && mfma_e4m3_execute(shape, args)) return;
  if (f.a == Elem::BF16 && f.b == Elem::BF16 && mfma_bf16_execute(shape, args)) return;
  if (!args.register_major) {
    mfma_execute_general(args);
    return;
  }
  // The general path takes lane-major registers: transpose in and out.
  const MfmaInfo info = mfma_info(args.op, args.cbsz, args.blgp);
  std::array<uint32_t, 64 * 16> a, b, c, dl;
  const auto to_lane_major = [](const uint32_t* rm, int regs, uint32_t* lm) {
    for (int r = 0; r < regs; ++r)
      for (int l = 0; l < 64; ++l) lm[l * regs + r] = rm[r * 64 + l];
  };
  to_lane_major(args.a, info.a_regs, a.data());
  to_lane_major(args.b, info.b_regs, b.data());
  to_lane_major(args.c, info.d_regs, c.data());
  MfmaArgs lane_major = args;
  lane_major.register_major = false;
  lane_major.a = a.data();
  lane_major.b = b.data();
  lane_major.c = c.data();
  lane_major.d = dl.data();
  mfma_execute_general(lane_major);
  for (int r = 0; r < info.d_regs; ++r)
    for (int l = 0; l < 64; ++l) args.d[r * 64 + l] = dl[l * info.d_regs + r];
}

void mfma_execute_general(const MfmaArgs& args) {
  const OpDesc& d = desc_of(args.op);
  validate_fields(d, args);
  const Formats f = formats_of(d, args.cbsz, args.blgp);

  const int block = d.k < 32 ? d.k : 32;
  thread_local Decoded a, b;
  gather_operand(d, f.a, args.a, true, block, a);
  gather_operand(d, f.b, args.b, false, block, b);
  const int nblocks = a.nblocks;

  // E8M0 scale byte of A row i / B column j for K block p: lane i + M*p (j + N*p), byte *_sel.
  const auto scale_byte = [](const uint32_t* scales, uint32_t sel, int row, int dim, int p) {
    return (scales[row + dim * p] >> (8 * sel)) & 0xFFu;
  };

  const int d_regs = d.m * d.n / 64;
  std::array<uint32_t, 64 * 16> result{};
  for (int i = 0; i < d.m; ++i) {
    for (int j = 0; j < d.n; ++j) {
      const mfma_layout::OutPos pos = mfma_layout::output_pos(d.m, i, j);
      const size_t slot = static_cast<size_t>(pos.lane) * d_regs + pos.reg;
      uint32_t acc = args.c[slot];
      for (int p = 0; p < nblocks; ++p) {
        int scale_exp = 0;
        bool nan_scale = false;
        if (d.scaled) {
          const uint32_t sa = scale_byte(args.scale_a, args.scale_a_sel, i, d.m, p);
          const uint32_t sb = scale_byte(args.scale_b, args.scale_b_sel, j, d.n, p);
          nan_scale = sa == 0xFFu || sb == 0xFFu;
          scale_exp = static_cast<int>(sa) + static_cast<int>(sb) - 254;
        }
        const size_t ca = static_cast<size_t>(i) * nblocks + p;
        const size_t cb = static_cast<size_t>(j) * nblocks + p;
        acc = accumulate_block(acc, &a.v[static_cast<size_t>(i) * d.k + p * block],
                               &b.v[static_cast<size_t>(j) * d.k + p * block], block, a.msb[ca],
                               a.lsb[ca], b.msb[cb], b.lsb[cb],
                               a.nonfinite[ca] || b.nonfinite[cb], scale_exp, nan_scale);
      }
      result[slot] = acc;
    }
  }
  // C may alias D: all of C was read before any of D is written.
  std::memcpy(args.d, result.data(), sizeof(uint32_t) * 64 * d_regs);
}

}  // namespace zyfa::emu
