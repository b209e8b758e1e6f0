// NaN and Inf that a query cannot see (keys/values after its causal limit, bytes after each
// tensor) leave its output bitwise unchanged on the cuda kernels; a row that sees a
// non-finite value of V does not come out finite. Skips without a Hopper GPU.
#include <gtest/gtest.h>


#include "cuda_test_util.h"
#include "support/fwd_matrix.h"
#include "support/unseen_garbage.h"

namespace zyfa::test {
namespace {

// NaN from row 520 of 700: a case seen on the H200.
std::vector<AttnConfig> configs() { return unseen_nan_matrix(700, 4, 2); }

class UnseenNan : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(UnseenNan, Cuda) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = GetParam();
  c.seed = seed_for("UnseenNan/" + c.name());
  expect_unseen_rows_unchanged(make_attn_data(c), 520, run_on_device);
}

INSTANTIATE_TEST_SUITE_P(UnseenNan, UnseenNan, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
