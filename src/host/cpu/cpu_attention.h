// Exact causal attention on host memory: fp64 arithmetic, online softmax over key tiles,
// one BF16 RNE rounding of each output.
#pragma once

#include "host/problem.h"

namespace zyfa::cpu {

// Rows of queries (and keys) per tile. Work items are (batch, head, query tile).
inline constexpr int64_t kTileRows = 64;

// Runs p on `threads` host threads (0: one per hardware thread). The result does not depend
// on the thread count: every output row is computed by one thread in a fixed order.
void attention_fwd(const FwdProblem& p, unsigned threads = 0);

}  // namespace zyfa::cpu
