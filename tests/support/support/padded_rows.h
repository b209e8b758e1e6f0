// V re-laid with padding after each sequence row, so that its row stride is no longer the
// packed one: the view the AMD host sends to the baseline kernels when the padding breaks the
// ping-pong kernels' 16-byte rows, or keeps on the ping-pong kernels when it does not.
#pragma once

#include <cstdint>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

// `a` (BSHD) with `pad` elements after each sequence row of V (its row stride grows by
// `pad`). The padding holds NaNs (BF16 0x7FC1, e4m3 0x7F): a kernel that read it would turn
// outputs into NaN.
void pad_v_rows(AttnData& a, int64_t pad);

// An output view of `a`'s shape (BSHD) with gaps: `head_pad` elements after each head's row,
// `row_pad` after each sequence row, `batch_pad` after each batch.
struct OutView {
  int64_t stride[3];  // elements, over (batch, seqlen, heads)
  size_t elems;       // of the buffer that holds the view
};
OutView padded_out_view(const AttnConfig& c, int64_t head_pad, int64_t row_pad, int64_t batch_pad);

// Gathers the view in `out` into the contiguous layout the checker expects (*dense); returns
// how many elements outside the view no longer hold the BF16 poison.
int64_t gather_out_view(const AttnData& a, const OutView& v, const std::vector<uint16_t>& out,
                        std::vector<uint16_t>* dense);

}  // namespace zyfa::test
