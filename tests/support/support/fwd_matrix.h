// The configurations of the zyfa_fwd tests: one list for every backend, each checked against
// the same fp64 reference (as ggml's test-backend-ops runs every backend against one
// reference). A backend chooses only the sizes: the tile edges its kernels have and lengths
// its speed allows; cases particular to one kernel stay in that backend's test.
#pragma once

#include <cstdint>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

struct FwdMatrixSizes {
  std::vector<int64_t> sweep;  // sequence lengths of the d 128 GQA sweep: around the tile edges
  int64_t sweep_heads = 8, sweep_heads_k = 2;
  int64_t small = 97;   // head counts, layouts, batches, descales, no LSE
  int64_t mid = 300;    // d 192 realistic, std-1 and rising inputs: several key blocks
  int64_t large = 1000;  // d 192 GQA and realistic inputs over many key blocks
};

// Both dtypes through every case (d 128 and 192, MHA / GQA / MQA, the three layouts, batches,
// the three input kinds, no LSE), then the FP8 device descales and a non-default scale.
std::vector<AttnConfig> fwd_matrix(const FwdMatrixSizes& sizes);

// The unseen-NaN tests (support/unseen_garbage.h): both dtypes at d 128 and 192 with the
// backend's sequence length and heads, and a short BHSD batch of two.
std::vector<AttnConfig> unseen_nan_matrix(int64_t seqlen, int64_t heads, int64_t heads_k);

// The large-score tests (support/large_scores.h): both dtypes at d 128 and 192, MQA.
std::vector<AttnConfig> large_scores_matrix(int64_t seqlen);

}  // namespace zyfa::test
