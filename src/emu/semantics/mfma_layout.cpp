// MFMA register layouts, each confirmed against at least two public sources:
//
// Operands A and B (lane l, element e of the lane's register tuple; M = N = 16 or 32):
//  - Every family except f8f6f4 with FP8/FP6 operands: lane l holds row (A) / column (B) l % M
//    and the `per_lane` consecutive K indices starting at per_lane * (l / M). Sources: AMD
//    matrix instruction calculator (gfx90a/gfx940 16x16x16 and 32x32x8 bf16/f16, 16x16x32 and
//    32x32x16 fp8), the ROCm blog "Matrix Core Programming on AMD CDNA3 and CDNA4" (kernels for
//    16x16x16 f16: A + 4*(l/16) + 16*(l%16); 32x32x16 fp8: A + 8*(l/32) + 16*(l%32)), and
//    gfx950-facts.md for the gfx950 double-K shapes (16x16x32 / 32x32x16 bf16/f16: 8 elements
//    per lane at K = 8*(l/M)), which is also Triton's general MFMA operand rule
//    (mfmaDotToLinearLayout: each lane holds kWidth consecutive K values, lanes run along M/N
//    first and then along K; one instruction tile covers K = kWidth * 64 / M). FP4 in the f8f6f4 family follows the same rule with 32 values per lane:
//    the blog's 32x32x64 fp4 kernel (lane l: row l%32, bytes 16*(l/32).., low nibble = lower K)
//    and Triton's scaled-MFMA layout ("for mxfp4, these 32 elements are consecutive").
//  - f8f6f4 with an FP8 or FP6 operand (32 values per lane in 8 or 6 VGPRs): values 0..15 hold
//    K = 16*(l/M) + e, values 16..31 hold K = K/2 + 16*(l/M) + (e-16). Sources for FP8: the
//    ROCm blog's 32x32x64 fp8 kernel (a_reg[i*16+j] = A[l%32][16*(l/32) + 32*i + j]),
//    gfx950-facts.md (rocjitsu input_loc) and Triton's LinearLayoutConversions ("for
//    mxfp6/mxfp8, there are 2 16-consecutive elements blocks"). FP6 rests on Triton's statement
//    alone; its register count (6) matches LLVM's gfx950 MC/MCA tests (v[4:9] for cbsz/blgp 2
//    and 3), and its values are packed upwards in 6-bit fields (value i at bits [6i+5:6i] of the
//    tuple), as V_CVT_SCALEF32_PK32_FP6_F32 writes them.
//
// Scale operands (v_mfma_scale_*): the E8M0 scale of A row i for K block p (32 values) is in
// lane i + M*p (B: column j, lane j + N*p). Sources: gfx950-facts.md (ROCm blog, rocjitsu,
// LLVM tests) and Triton's chooseScaledMfmaScaleLayout (16x16: lane bits 0-3 -> row, bits 4-5
// -> K block; 32x32: lane bits 0-4 -> row, bit 5 -> K block).
//
// Output D (and C), single-block 16x16 and 32x32:
//  - 16x16: D[i][j] in register i%4 of lane 16*(i/4) + j. Sources: matrix instruction
//    calculator; ROCm blog 16x16x16 kernel (C[i*16 + l%16 + (l/16)*64] = c_reg[i]).
//  - 32x32: D[i][j] in register 4*(i/8) + i%4 of lane 32*((i/4)%2) + j. Sources: matrix
//    instruction calculator; ROCm blog 32x32 kernels (c_reg[4*r + q] -> row 8*r + 4*(l/32) + q).
//    This is NOT tinygrad's emulator mapping (row = 16*group + register), which disagrees with
//    both; gfx950-facts.md records that trap.
#include "emu/semantics/mfma_layout.h"

#include <array>
#include <cmath>

#include "emu/semantics/convert.h"

namespace zyfa::emu::mfma_layout {

int elem_bits(Elem e) {
  switch (e) {
    case Elem::BF16:
    case Elem::F16: return 16;
    case Elem::E4M3:
    case Elem::E5M2: return 8;
    case Elem::E2M3:
    case Elem::E3M2: return 6;
    case Elem::E2M1: return 4;
  }
  return 0;
}

bool is_fp8(Elem e) { return e == Elem::E4M3 || e == Elem::E5M2; }

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::BF16: return "bf16";
    case Elem::F16: return "f16";
    case Elem::E4M3: return "e4m3";
    case Elem::E5M2: return "e5m2";
    case Elem::E2M3: return "e2m3";
    case Elem::E3M2: return "e3m2";
    case Elem::E2M1: return "e2m1";
  }
  return "?";
}

namespace {

// Decoding by table for the narrow formats: MFMA execution decodes thousands of elements per
// instruction, and the tables are built from the exact decoders in convert.cpp.
struct NarrowTables {
  std::array<double, 256> e4m3, e5m2;
  std::array<double, 64> e2m3, e3m2;
  std::array<double, 16> e2m1;
  NarrowTables() {
    for (uint32_t c = 0; c < 256; ++c) {
      e4m3[c] = decode_e4m3(static_cast<uint8_t>(c));
      e5m2[c] = decode_e5m2(static_cast<uint8_t>(c));
    }
    for (uint32_t c = 0; c < 64; ++c) {
      e2m3[c] = decode_e2m3(static_cast<uint8_t>(c));
      e3m2[c] = decode_e3m2(static_cast<uint8_t>(c));
    }
    for (uint32_t c = 0; c < 16; ++c) e2m1[c] = decode_e2m1(static_cast<uint8_t>(c));
  }
};

const NarrowTables& tables() {
  static const NarrowTables t;
  return t;
}

}  // namespace

double decode(Elem e, uint32_t code) {
  switch (e) {
    case Elem::BF16: return static_cast<double>(f32_from_bits((code & 0xFFFFu) << 16));
    case Elem::F16: return decode_f16(static_cast<uint16_t>(code));
    case Elem::E4M3: return tables().e4m3[code & 0xFFu];
    case Elem::E5M2: return tables().e5m2[code & 0xFFu];
    case Elem::E2M3: return tables().e2m3[code & 0x3Fu];
    case Elem::E3M2: return tables().e3m2[code & 0x3Fu];
    case Elem::E2M1: return tables().e2m1[code & 0xFu];
  }
  return NAN;
}

}  // namespace zyfa::emu::mfma_layout
