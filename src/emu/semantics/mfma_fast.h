// Fast, bit-exact MFMA execution for e4m3 x e4m3 and bf16 x bf16 operands (internal to the
// MFMA semantics).
//
// Both give exactly the bits of the general path in mfma.cpp (each K block's exact value
// "running C + scale * sum of products" rounded once to f32), by shorter routes whose
// exactness is proved in mfma_fast.cpp.
#pragma once

#include "emu/semantics/mfma.h"

namespace zyfa::emu {

// Shape of one MFMA as mfma.cpp describes it.
struct FastShape {
  int m, n, k;       // 16 or 32 rows/columns; K per instruction
  int block;         // K block (min(k, 32)): one f32 rounding per block
  int per_lane;      // elements of A (and B) per lane
  bool chunked;      // f8f6f4 layout: two 16-element K chunks per lane
  bool scaled;       // E8M0 scales per block from args.scale_a/scale_b
};

// e4m3 x e4m3. Writes args.d and returns true, or returns false without writing anything when
// an operand holds a NaN code or a scale byte is 0xFF (NaN): those are left to the general path.
bool mfma_e4m3_execute(const FastShape& shape, const MfmaArgs& args);

// bf16 x bf16, one K block (K <= 32), unscaled. Returns false without writing anything when an
// operand holds an infinity or NaN.
bool mfma_bf16_execute(const FastShape& shape, const MfmaArgs& args);

}  // namespace zyfa::emu
