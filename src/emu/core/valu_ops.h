// Per-opcode facts the vector ALU needs beyond the encoding: operand width (for the
// neg/abs/SDWA modifiers and inline constants), whether the result is a float that omod and
// clamp apply to, and the comparison of each VOPC opcode. Derived once from the mnemonics of
// isa_opcodes.cpp (the type suffix names the operand type: v_<op>_<dst>_<src>).
#pragma once

#include <cstdint>

namespace zyfa::emu {

enum class ValuType : uint8_t { kB32, kF32, kF16, kF64, kI64, kI16, kBF16, kOther };

struct ValuOpInfo {
  ValuType src = ValuType::kB32;   // type of the sources
  ValuType dst = ValuType::kB32;   // type of the result
  // VOPC only.
  bool is_cmp = false, is_cmpx = false, is_class = false;
  uint8_t cond = 0;  // f32/f16/f64: 0 f,1 lt,2 eq,3 le,4 gt,5 lg,6 ge,7 o,8 u,9 nge,10 nlg,11 ngt,12 nle,13 neq,14 nlt,15 tru
                     // int: 0 f,1 lt,2 eq,3 le,4 gt,5 ne,6 ge,7 t
  bool is_signed = false;
};

const ValuOpInfo& valu_op_info(uint16_t valu_op);

// v_min_f32 / v_max_f32 of two f32 bit patterns as the CDNA4 pseudocode defines them, NaN
// rules of MODE.IEEE included (exec_valu.cpp).
uint32_t fmin32(uint32_t a, uint32_t b, bool ieee);
uint32_t fmax32(uint32_t a, uint32_t b, bool ieee);

// v_perm_b32 of one lane as the CDNA4 pseudocode defines it (exec_valu.cpp).
uint32_t perm_b32(uint32_t a, uint32_t b, uint32_t selector);
// The same for 64 lanes (out[l] = perm_b32(a[l], b[l], c[l])) when every lane has the same
// selector and it holds no sign-replicating select (8-11), without per-lane branches; false
// and nothing written otherwise.
bool perm_uniform(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out);

// v_bitop3_b32: bit i of the result is bit {a_i, b_i, c_i} (a the high index bit) of the
// 8-bit truth table `ttbl`. Formed as the OR of the table's minterms, whole words at a time:
// exactly one minterm covers each bit position.
inline uint32_t bitop3_b32(uint32_t a, uint32_t b, uint32_t c, uint32_t ttbl) {
  uint32_t r = 0;
  for (int t = 0; t < 8; ++t) {
    const uint32_t term = ((t & 4) ? a : ~a) & ((t & 2) ? b : ~b) & ((t & 1) ? c : ~c);
    r |= ((ttbl >> t) & 1) ? term : 0u;
  }
  return r;
}

// Without NaNs the same results follow the order of these keys (-0 below +0, equal keys only
// for equal bits), which lane loops compare without branches.
inline uint32_t order_key(uint32_t u) { return (u & 0x80000000u) ? ~u : (u | 0x80000000u); }
inline uint32_t max_ordered(uint32_t a, uint32_t b) { return order_key(a) >= order_key(b) ? a : b; }
inline uint32_t min_ordered(uint32_t a, uint32_t b) { return order_key(a) <= order_key(b) ? a : b; }

}  // namespace zyfa::emu
