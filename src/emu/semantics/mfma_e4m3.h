// Fast, bit-exact MFMA execution for e4m3 x e4m3 operands (internal to the MFMA semantics).
//
// Gives exactly the bits of the general path in mfma.cpp (each K block's exact value
// "running C + scale * sum of products" rounded once to f32), by a shorter route that is
// exact only for e4m3 x e4m3: the proof is in mfma_e4m3.cpp.
#pragma once

#include "emu/semantics/mfma.h"

namespace zyfa::emu {

// Shape of one e4m3 x e4m3 MFMA as mfma.cpp describes it.
struct E4m3Shape {
  int m, n, k;       // 16 or 32 rows/columns; K per instruction
  int block;         // K block (min(k, 32)): one f32 rounding per block
  int per_lane;      // elements of A (and B) per lane
  bool chunked;      // f8f6f4 layout: two 16-element K chunks per lane
  bool scaled;       // E8M0 scales per block from args.scale_a/scale_b
};

// Writes args.d and returns true, or returns false without writing anything when an operand
// holds a NaN code or a scale byte is 0xFF (NaN): those cases are left to the general path.
bool mfma_e4m3_execute(const E4m3Shape& shape, const MfmaArgs& args);

}  // namespace zyfa::emu
