// Where each matrix element of a gfx950 MFMA lives in the wave's registers (internal to the
// MFMA semantics; the sources for every formula are cited in mfma_layout.cpp).
#pragma once

#include <cstdint>

namespace zyfa::emu::mfma_layout {

enum class Elem { BF16, F16, E4M3, E5M2, E2M3, E3M2, E2M1 };

int elem_bits(Elem e);
bool is_fp8(Elem e);
const char* elem_name(Elem e);
double decode(Elem e, uint32_t code);

// Element `index` of one lane's register tuple, elements packed from bit 0 of the first
// register upwards without gaps (16-bit elements: low half first; FP6: 6-bit fields that may
// straddle registers).
inline uint32_t extract(const uint32_t* lane_regs, int bits, int index) {
  const int first = bits * index;
  const int reg = first / 32;
  const int shift = first % 32;
  uint64_t window = lane_regs[reg] >> shift;
  if (shift + bits > 32) window |= static_cast<uint64_t>(lane_regs[reg + 1]) << (32 - shift);
  return static_cast<uint32_t>(window & ((uint64_t{1} << bits) - 1));
}

// Row of A (or column of B) and K index of element `e` held by `lane`, for an operand of a
// `mn` x `k` (or `k` x `mn`) block where each lane holds `per_lane` elements. `chunked` is
// the FP8/FP6 layout of the f8f6f4 family (two 16-element K chunks per lane).
struct Pos {
  int mn;
  int k;
};
inline Pos operand_pos(int mn, int k, int per_lane, bool chunked, int lane, int e) {
  const int group = lane / mn;
  if (chunked) return {lane % mn, (e / 16) * (k / 2) + 16 * group + e % 16};
  return {lane % mn, per_lane * group + e};
}

// Register index and lane of output element D[i][j] for a 16x16 or 32x32 single-block MFMA.
struct OutPos {
  int reg;
  int lane;
};
inline OutPos output_pos(int mn, int i, int j) {
  if (mn == 16) return {i % 4, 16 * (i / 4) + j};
  return {4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j};
}

}  // namespace zyfa::emu::mfma_layout
