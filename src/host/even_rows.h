// Rows of a (batch, seqlen, heads, head_dim) view that are all the same distance apart (packed
// tensors, or rows padded to one pitch) let a kernel find row r at r * step instead of
// splitting r into (b, s, h).
#pragma once

#include <cstdint>

namespace zyfa {

// The distance in elements from each row of (b, s, h) to the next when it is the same for
// all of them, else 0.
inline int64_t even_row_step(const int64_t* shape, const int64_t* stride) {
  int64_t step = 0, inner = 1;  // inner: rows spanned by one step of the dimension
  for (int dim = 2; dim >= 0; --dim) {
    if (shape[dim] == 1) continue;  // its stride is never used
    if (step == 0 && (step = stride[dim]) == 0) return 0;
    if (stride[dim] != step * inner) return 0;
    inner *= shape[dim];
  }
  return step != 0 ? step : 1;  // a single row: r is always 0
}

}  // namespace zyfa
