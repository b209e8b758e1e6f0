// V re-laid with padding after each sequence row, so that its row stride is no longer the
// packed one: the view the AMD host sends to the baseline kernels when the padding breaks the
// ping-pong kernels' 16-byte rows, or keeps on the ping-pong kernels when it does not.
#pragma once

#include <cstdint>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

// `a` (BSHD) with `pad` elements after each sequence row of V (its row stride grows by
// `pad`). The padding holds NaNs (BF16 0x7FC1, e4m3 0x7F): a kernel that read it would turn
// outputs into NaN.
void pad_v_rows(AttnData& a, int64_t pad);

}  // namespace zyfa::test
