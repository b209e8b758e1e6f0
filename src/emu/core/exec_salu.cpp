// Scalar ALU (SOP2, SOPK, SOP1, SOPC) and program control (SOPP).
// Semantics: AMD CDNA4 ISA, "Scalar ALU Operations" and "Scalar Program Flow" (per-opcode
// pseudocode as extracted in tinygrad/runtime/autogen/amd/cdna/str_pcode.py). SCC rules are
// per instruction: carry/borrow for unsigned add/sub, signed overflow for i32 add/sub,
// result != 0 for bitwise ops and shifts, the comparison for min/max and SOPC.
#include "emu/core/bits.h"
#include <cstring>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

// S_BFE_*: the field of ctl[22:16] bits at bit ctl[4:0] (ctl[5:0] for 64 bits) of v,
// sign-extended when `sign`.
template <typename U>
U bfe(U v, uint32_t ctl, bool sign) {
  constexpr uint32_t kBits = 8 * sizeof(U);
  const uint32_t off = ctl & (kBits - 1), width = (ctl >> 16) & 0x7F;
  if (width == 0) return 0;
  U r = v >> off;
  const U field = width < kBits ? (U(1) << width) - 1 : ~U(0);
  r &= field;
  if (sign && width < kBits && (r >> (width - 1)) & 1) r |= ~field;
  return r;
}
uint32_t bfe32(uint32_t v, uint32_t ctl, bool sign) { return bfe(v, ctl, sign); }
uint64_t bfe64(uint64_t v, uint32_t ctl, bool sign) { return bfe(v, ctl, sign); }
uint32_t brev32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
int32_t ff1_32(uint32_t v) { return v ? ctz32(v) : -1; }
int32_t ff1_64(uint64_t v) { return v ? ctz64(v) : -1; }
int32_t flbit32(uint32_t v) { return v ? clz32(v) : -1; }
int32_t flbit64(uint64_t v) { return v ? clz64(v) : -1; }
int32_t flbit_i32(int32_t v) {  // first bit that differs from the sign bit, from the MSB
  const uint32_t u = v < 0 ? ~uint32_t(v) : uint32_t(v);
  return u ? clz32(u) : -1;
}

// HW register access (s_getreg/s_setreg): HW_REG_MODE (id 1) is modelled; the field is
// simm16 [5:0] id, [10:6] offset, [15:11] size - 1.
struct HwReg { uint32_t id, offset, size; };
HwReg hwreg(uint32_t simm16) { return {simm16 & 0x3F, (simm16 >> 6) & 0x1F, ((simm16 >> 11) & 0x1F) + 1}; }

// s_setreg of a hardware register, then s_getreg or another s_setreg of the same register:
// 2 wait states on gfx9 (LLVM GCNHazardRecognizer checkGetRegHazards / checkSetRegHazards,
// getSetRegWaitStates; CDNA4 ISA "Manually Inserted Wait States"). Only MODE is modelled.
void setreg_hazard(Executor& x, const std::string& consumer) {
  const Wave& w = x.wave();
  if (!w.setreg_mode_clock) return;
  const int64_t have = wait_states_after_stamp(w, w.setreg_mode_clock);
  if (have < 2)
    x.fault(fmt::format("SALU hazard: {} of HW_REG_MODE {} wait state(s) after an s_setreg of it; it requires 2",
                        consumer, have));
}

uint64_t image_base(Executor& x) { return reinterpret_cast<uint64_t>(x.ctx().object->image().data()); }

}  // namespace

void execute_salu(Executor& x) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  auto S0 = [&] { return x.sread(in.src[0]); };
  auto S1 = [&] { return x.sread(in.src[1]); };
  auto S0_64 = [&] { return x.sread64(in.src[0]); };
  auto S1_64 = [&] { return x.sread64(in.src[1]); };
  auto D = [&](uint32_t v) {
    x.swrite(in.dst, v);
    if (in.dst == operand::kM0) w.salu_m0_write_clock = w.clock + 1;
  };
  auto D64 = [&](uint64_t v) { x.swrite64(in.dst, v); };

  if (in.enc == Encoding::kSop2) {
    switch (in.op) {
      case op::S_ADD_U32: { const uint64_t r = uint64_t(S0()) + S1(); D(uint32_t(r)); w.scc = r >> 32; return; }
      case op::S_SUB_U32: { const uint32_t a = S0(), b = S1(); D(a - b); w.scc = b > a; return; }
      case op::S_ADD_I32: { const int32_t a = S0(), b = S1(); const int32_t r = int32_t(uint32_t(a) + uint32_t(b));
                            D(r); w.scc = ((a >= 0) == (b >= 0)) && ((r >= 0) != (a >= 0)); return; }
      case op::S_SUB_I32: { const int32_t a = S0(), b = S1(); const int32_t r = int32_t(uint32_t(a) - uint32_t(b));
                            D(r); w.scc = ((a >= 0) != (b >= 0)) && ((r >= 0) != (a >= 0)); return; }
      case op::S_ADDC_U32: { const uint64_t r = uint64_t(S0()) + S1() + w.scc; D(uint32_t(r)); w.scc = r >> 32; return; }
      case op::S_SUBB_U32: { const uint32_t a = S0(), b = S1(); const uint64_t r = uint64_t(a) - b - w.scc;
                             D(uint32_t(r)); w.scc = uint64_t(b) + w.scc > a; return; }
      case op::S_MIN_I32: { const int32_t a = S0(), b = S1(); w.scc = a < b; D(w.scc ? a : b); return; }
      case op::S_MIN_U32: { const uint32_t a = S0(), b = S1(); w.scc = a < b; D(w.scc ? a : b); return; }
      // CDNA4 pseudocode S_MAX_I32/S_MAX_U32: SCC = S0 >= S1 (set when the operands are equal,
      // unlike S_MIN's S0 < S1).
      case op::S_MAX_I32: { const int32_t a = S0(), b = S1(); w.scc = a >= b; D(w.scc ? a : b); return; }
      case op::S_MAX_U32: { const uint32_t a = S0(), b = S1(); w.scc = a >= b; D(w.scc ? a : b); return; }
      case op::S_CSELECT_B32: { const uint32_t a = S0(), b = S1(); D(w.scc ? a : b); return; }
      case op::S_CSELECT_B64: { const uint64_t a = S0_64(), b = S1_64(); D64(w.scc ? a : b); return; }
#define ZYFA_BITOP(NAME, EXPR)                                                          \
  case op::NAME##_B32: { const uint32_t a = S0(), b = S1(); const uint32_t r = EXPR;    \
                         D(r); w.scc = r != 0; return; }                                \
  case op::NAME##_B64: { const uint64_t a = S0_64(), b = S1_64(); const uint64_t r = EXPR; \
                         D64(r); w.scc = r != 0; return; }
      ZYFA_BITOP(S_AND, a & b)
      ZYFA_BITOP(S_OR, a | b)
      ZYFA_BITOP(S_XOR, a ^ b)
      ZYFA_BITOP(S_ANDN2, a & ~b)
      ZYFA_BITOP(S_ORN2, a | ~b)
      ZYFA_BITOP(S_NAND, ~(a & b))
      ZYFA_BITOP(S_NOR, ~(a | b))
      ZYFA_BITOP(S_XNOR, ~(a ^ b))
#undef ZYFA_BITOP
      case op::S_LSHL_B32: { const uint32_t r = S0() << (S1() & 31); D(r); w.scc = r != 0; return; }
      case op::S_LSHL_B64: { const uint64_t r = S0_64() << (S1() & 63); D64(r); w.scc = r != 0; return; }
      case op::S_LSHR_B32: { const uint32_t r = S0() >> (S1() & 31); D(r); w.scc = r != 0; return; }
      case op::S_LSHR_B64: { const uint64_t r = S0_64() >> (S1() & 63); D64(r); w.scc = r != 0; return; }
      case op::S_ASHR_I32: { const int32_t r = int32_t(S0()) >> (S1() & 31); D(r); w.scc = r != 0; return; }
      case op::S_ASHR_I64: { const int64_t r = int64_t(S0_64()) >> (S1() & 63); D64(r); w.scc = r != 0; return; }
      case op::S_BFM_B32: { const uint32_t a = S0() & 31, b = S1() & 31; D(((1u << a) - 1) << b); return; }
      case op::S_BFM_B64: { const uint32_t a = S0() & 63, b = S1() & 63;
                            D64((a == 0 ? 0 : ((~0ull) >> (64 - a))) << b); return; }
      case op::S_MUL_I32: { D(uint32_t(int64_t(int32_t(S0())) * int32_t(S1()))); return; }
      case op::S_MUL_HI_U32: { D(uint32_t((uint64_t(S0()) * S1()) >> 32)); return; }
      case op::S_MUL_HI_I32: { D(uint32_t((int64_t(int32_t(S0())) * int32_t(S1())) >> 32)); return; }
      case op::S_BFE_U32: { const uint32_t r = bfe32(S0(), S1(), false); D(r); w.scc = r != 0; return; }
      case op::S_BFE_I32: { const uint32_t r = bfe32(S0(), S1(), true); D(r); w.scc = r != 0; return; }
      case op::S_BFE_U64: { const uint64_t a = S0_64(); const uint64_t r = bfe64(a, S1(), false); D64(r); w.scc = r != 0; return; }
      case op::S_BFE_I64: { const uint64_t a = S0_64(); const uint64_t r = bfe64(a, S1(), true); D64(r); w.scc = r != 0; return; }
      // CDNA4 pseudocode S_ABSDIFF_I32: D = S0.i32 - S1.i32 in 32 bits, then negated if negative
      // (so INT_MAX - INT_MIN wraps to -1 and gives 1).
      case op::S_ABSDIFF_I32: { const int32_t d = int32_t(S0() - S1());
                                const uint32_t r = d < 0 ? 0u - uint32_t(d) : uint32_t(d); D(r); w.scc = r != 0; return; }
      case op::S_LSHL1_ADD_U32: case op::S_LSHL2_ADD_U32: case op::S_LSHL3_ADD_U32: case op::S_LSHL4_ADD_U32: {
        const int sh = in.op - op::S_LSHL1_ADD_U32 + 1;
        const uint64_t r = (uint64_t(S0()) << sh) + S1();
        D(uint32_t(r)); w.scc = (r >> 32) != 0; return;
      }
      case op::S_PACK_LL_B32_B16: { const uint32_t a = S0(), b = S1(); D((a & 0xFFFF) | (b << 16)); return; }
      case op::S_PACK_LH_B32_B16: { const uint32_t a = S0(), b = S1(); D((a & 0xFFFF) | (b & 0xFFFF0000u)); return; }
      case op::S_PACK_HH_B32_B16: { const uint32_t a = S0(), b = S1(); D((a >> 16) | (b & 0xFFFF0000u)); return; }
      default: break;
    }
  } else if (in.enc == Encoding::kSopk) {
    const uint32_t k = uint32_t(in.simm16) & 0xFFFF;
    const int32_t ks = int16_t(k);
    auto Dread = [&] { return x.sread(in.dst); };
    switch (in.op) {
      case op::S_MOVK_I32: D(uint32_t(ks)); return;
      case op::S_CMOVK_I32: if (w.scc) D(uint32_t(ks)); return;
      case op::S_CMPK_EQ_I32: w.scc = int32_t(Dread()) == ks; return;
      case op::S_CMPK_LG_I32: w.scc = int32_t(Dread()) != ks; return;
      case op::S_CMPK_GT_I32: w.scc = int32_t(Dread()) > ks; return;
      case op::S_CMPK_GE_I32: w.scc = int32_t(Dread()) >= ks; return;
      case op::S_CMPK_LT_I32: w.scc = int32_t(Dread()) < ks; return;
      case op::S_CMPK_LE_I32: w.scc = int32_t(Dread()) <= ks; return;
      case op::S_CMPK_EQ_U32: w.scc = Dread() == k; return;
      case op::S_CMPK_LG_U32: w.scc = Dread() != k; return;
      case op::S_CMPK_GT_U32: w.scc = Dread() > k; return;
      case op::S_CMPK_GE_U32: w.scc = Dread() >= k; return;
      case op::S_CMPK_LT_U32: w.scc = Dread() < k; return;
      case op::S_CMPK_LE_U32: w.scc = Dread() <= k; return;
      case op::S_ADDK_I32: { const int32_t a = int32_t(Dread());
                             const int32_t r = int32_t(uint32_t(a) + uint32_t(ks));
                             D(uint32_t(r)); w.scc = ((a >= 0) == (ks >= 0)) && ((r >= 0) != (a >= 0)); return; }
      case op::S_MULK_I32: D(uint32_t(int64_t(int32_t(Dread())) * ks)); return;
      case op::S_CALL_B64:  // D = address of the next instruction; PC += simm16 * 4 + 4
        D64(image_base(x) + in.pc + 4);
        x.set_next_pc(in.pc + 4 + int64_t(ks) * 4);
        return;
      case op::S_GETREG_B32: {
        const HwReg h = hwreg(k);
        if (h.id != 1) x.fault(fmt::format("s_getreg of hardware register {} is not modelled (only HW_REG_MODE)", h.id));
        setreg_hazard(x, "s_getreg_b32");
        const uint32_t mask = h.size >= 32 ? ~0u : ((1u << h.size) - 1);
        D((w.mode >> h.offset) & mask);
        return;
      }
      case op::S_SETREG_B32:
      case op::S_SETREG_IMM32_B32: {
        const HwReg h = hwreg(k);
        if (h.id != 1) x.fault(fmt::format("s_setreg of hardware register {} is not modelled (only HW_REG_MODE)", h.id));
        setreg_hazard(x, in.name);
        w.setreg_mode_clock = w.clock + 1;
        const uint32_t value = in.op == op::S_SETREG_B32 ? Dread() : in.literal;
        const uint32_t mask = (h.size >= 32 ? ~0u : ((1u << h.size) - 1)) << h.offset;
        w.mode = (w.mode & ~mask) | ((value << h.offset) & mask);
        return;
      }
      default: break;
    }
  } else if (in.enc == Encoding::kSop1) {
    switch (in.op) {
      case op::S_MOV_B32: D(S0()); return;
      case op::S_MOV_B64: D64(S0_64()); return;
      case op::S_CMOV_B32: { const uint32_t a = S0(); if (w.scc) D(a); return; }
      case op::S_CMOV_B64: { const uint64_t a = S0_64(); if (w.scc) D64(a); return; }
      case op::S_NOT_B32: { const uint32_t r = ~S0(); D(r); w.scc = r != 0; return; }
      case op::S_NOT_B64: { const uint64_t r = ~S0_64(); D64(r); w.scc = r != 0; return; }
      case op::S_WQM_B32: case op::S_WQM_B64: {
        const uint64_t a = in.op == op::S_WQM_B32 ? S0() : S0_64();
        uint64_t r = 0;
        for (int q = 0; q < 16; ++q) if ((a >> (4 * q)) & 0xF) r |= 0xFull << (4 * q);
        if (in.op == op::S_WQM_B32) D(uint32_t(r)); else D64(r);
        w.scc = r != 0; return;
      }
      case op::S_BREV_B32: D(brev32(S0())); return;
      case op::S_BREV_B64: { const uint64_t a = S0_64(); D64((uint64_t(brev32(uint32_t(a))) << 32) | brev32(uint32_t(a >> 32))); return; }
      case op::S_BCNT0_I32_B32: { const uint32_t r = 32 - popcnt(S0()); D(r); w.scc = r != 0; return; }
      case op::S_BCNT0_I32_B64: { const uint32_t r = 64 - popcnt(S0_64()); D(r); w.scc = r != 0; return; }
      case op::S_BCNT1_I32_B32: { const uint32_t r = popcnt(S0()); D(r); w.scc = r != 0; return; }
      case op::S_BCNT1_I32_B64: { const uint32_t r = popcnt(S0_64()); D(r); w.scc = r != 0; return; }
      case op::S_FF0_I32_B32: D(uint32_t(ff1_32(~S0()))); return;
      case op::S_FF0_I32_B64: D(uint32_t(ff1_64(~S0_64()))); return;
      case op::S_FF1_I32_B32: D(uint32_t(ff1_32(S0()))); return;
      case op::S_FF1_I32_B64: D(uint32_t(ff1_64(S0_64()))); return;
      case op::S_FLBIT_I32_B32: D(uint32_t(flbit32(S0()))); return;
      case op::S_FLBIT_I32_B64: D(uint32_t(flbit64(S0_64()))); return;
      case op::S_FLBIT_I32: D(uint32_t(flbit_i32(int32_t(S0())))); return;
      case op::S_SEXT_I32_I8: D(uint32_t(int32_t(int8_t(S0())))); return;
      case op::S_SEXT_I32_I16: D(uint32_t(int32_t(int16_t(S0())))); return;
      case op::S_BITSET0_B32: { const uint32_t b = S0() & 31; D(x.sread(in.dst) & ~(1u << b)); return; }
      case op::S_BITSET1_B32: { const uint32_t b = S0() & 31; D(x.sread(in.dst) | (1u << b)); return; }
      case op::S_BITSET0_B64: { const uint32_t b = S0() & 63; D64(x.sread64(in.dst) & ~(1ull << b)); return; }
      case op::S_BITSET1_B64: { const uint32_t b = S0() & 63; D64(x.sread64(in.dst) | (1ull << b)); return; }
      // Program addresses are host addresses of the loaded image (so s_getpc-relative loads of
      // the code object's own data work); the executor's PC is the offset in that image.
      case op::S_GETPC_B64: D64(image_base(x) + in.pc + 4); return;
      case op::S_SETPC_B64: x.set_next_pc(S0_64() - image_base(x)); return;
      case op::S_SWAPPC_B64: { const uint64_t t = S0_64(); D64(image_base(x) + in.pc + 4); x.set_next_pc(t - image_base(x)); return; }
      case op::S_ABS_I32: { const int32_t a = int32_t(S0()); const uint32_t r = a < 0 ? uint32_t(-int64_t(a)) : uint32_t(a);
                            D(r); w.scc = r != 0; return; }
      case op::S_AND_SAVEEXEC_B64: case op::S_OR_SAVEEXEC_B64: case op::S_XOR_SAVEEXEC_B64:
      case op::S_ANDN2_SAVEEXEC_B64: case op::S_ORN2_SAVEEXEC_B64: case op::S_NAND_SAVEEXEC_B64:
      case op::S_NOR_SAVEEXEC_B64: case op::S_XNOR_SAVEEXEC_B64: case op::S_ANDN1_SAVEEXEC_B64:
      case op::S_ORN1_SAVEEXEC_B64: {
        const uint64_t s = S0_64(), e = w.exec();
        uint64_t r = 0;
        switch (in.op) {
          case op::S_AND_SAVEEXEC_B64: r = s & e; break;
          case op::S_OR_SAVEEXEC_B64: r = s | e; break;
          case op::S_XOR_SAVEEXEC_B64: r = s ^ e; break;
          case op::S_ANDN2_SAVEEXEC_B64: r = s & ~e; break;
          case op::S_ORN2_SAVEEXEC_B64: r = s | ~e; break;
          case op::S_NAND_SAVEEXEC_B64: r = ~(s & e); break;
          case op::S_NOR_SAVEEXEC_B64: r = ~(s | e); break;
          case op::S_XNOR_SAVEEXEC_B64: r = ~(s ^ e); break;
          case op::S_ANDN1_SAVEEXEC_B64: r = ~s & e; break;
          case op::S_ORN1_SAVEEXEC_B64: r = ~s | e; break;
        }
        D64(e);
        w.set_exec(r);
        w.scc = r != 0;
        return;
      }
      case op::S_ANDN1_WREXEC_B64: { const uint64_t r = ~S0_64() & w.exec(); w.set_exec(r); D64(r); w.scc = r != 0; return; }
      case op::S_ANDN2_WREXEC_B64: { const uint64_t r = S0_64() & ~w.exec(); w.set_exec(r); D64(r); w.scc = r != 0; return; }
      case op::S_BITREPLICATE_B64_B32: { const uint32_t a = S0(); uint64_t r = 0;
                                         for (int i = 0; i < 32; ++i) if ((a >> i) & 1) r |= 3ull << (2 * i);
                                         D64(r); return; }
      default: break;
    }
  } else if (in.enc == Encoding::kSopc) {
    switch (in.op) {
      case op::S_CMP_EQ_I32: case op::S_CMP_EQ_U32: w.scc = S0() == S1(); return;
      case op::S_CMP_LG_I32: case op::S_CMP_LG_U32: w.scc = S0() != S1(); return;
      case op::S_CMP_GT_I32: w.scc = int32_t(S0()) > int32_t(S1()); return;
      case op::S_CMP_GE_I32: w.scc = int32_t(S0()) >= int32_t(S1()); return;
      case op::S_CMP_LT_I32: w.scc = int32_t(S0()) < int32_t(S1()); return;
      case op::S_CMP_LE_I32: w.scc = int32_t(S0()) <= int32_t(S1()); return;
      case op::S_CMP_GT_U32: w.scc = S0() > S1(); return;
      case op::S_CMP_GE_U32: w.scc = S0() >= S1(); return;
      case op::S_CMP_LT_U32: w.scc = S0() < S1(); return;
      case op::S_CMP_LE_U32: w.scc = S0() <= S1(); return;
      case op::S_BITCMP0_B32: w.scc = ((S0() >> (S1() & 31)) & 1) == 0; return;
      case op::S_BITCMP1_B32: w.scc = ((S0() >> (S1() & 31)) & 1) == 1; return;
      case op::S_BITCMP0_B64: w.scc = ((S0_64() >> (S1() & 63)) & 1) == 0; return;
      case op::S_BITCMP1_B64: w.scc = ((S0_64() >> (S1() & 63)) & 1) == 1; return;
      case op::S_CMP_EQ_U64: w.scc = S0_64() == S1_64(); return;
      case op::S_CMP_LG_U64: w.scc = S0_64() != S1_64(); return;
      default: break;
    }
  }
  x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
}

void execute_sopp(Executor& x) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  const uint64_t target = in.pc + 4 + int64_t(int16_t(in.simm16)) * 4;
  switch (in.op) {
    case op::S_NOP: w.clock += (in.simm16 & 0xF) + 1; return;
    case op::S_ENDPGM: w.done = true; return;
    case op::S_BRANCH: x.set_next_pc(target); return;
    case op::S_CBRANCH_SCC0: if (!w.scc) x.set_next_pc(target); return;
    case op::S_CBRANCH_SCC1: if (w.scc) x.set_next_pc(target); return;
    case op::S_CBRANCH_VCCZ: if (w.vcc() == 0) x.set_next_pc(target); return;
    case op::S_CBRANCH_VCCNZ: if (w.vcc() != 0) x.set_next_pc(target); return;
    case op::S_CBRANCH_EXECZ: if (w.exec() == 0) x.set_next_pc(target); return;
    case op::S_CBRANCH_EXECNZ: if (w.exec() != 0) x.set_next_pc(target); return;
    case op::S_BARRIER: w.at_barrier = true; return;
    case op::S_WAITCNT: {
      x.wait_counts(waitcnt_vmcnt(in.simm16), waitcnt_lgkmcnt(in.simm16));
      return;
    }
    case op::S_SLEEP: case op::S_SETPRIO: case op::S_ICACHE_INV: case op::S_INCPERFLEVEL:
    case op::S_DECPERFLEVEL: case op::S_TTRACEDATA:
      return;  // scheduling hints, no architectural effect
    case op::S_TRAP: x.fault("s_trap executed");
    default: break;
  }
  x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
}

}  // namespace zyfa::emu
