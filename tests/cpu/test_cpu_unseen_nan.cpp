// NaN and Inf that a query cannot see (keys/values after its causal limit, bytes after each
// tensor) leave its output bitwise unchanged on the cpu backend; a row that sees a non-finite
// value of V does not come out finite.
#include <gtest/gtest.h>

#include <utility>

#include "cpu_test_util.h"
#include "support/fwd_matrix.h"
#include "support/seeded.h"
#include "support/unseen_garbage.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() { return unseen_nan_matrix(200, 4, 2); }

class UnseenNan : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(UnseenNan, Cpu) {
  const AttnConfig c = seeded(GetParam(), "UnseenNan/");
  expect_unseen_rows_unchanged_on_host(make_attn_data(c), 150, [](AttnData& a) { return run_cpu(a); });
}

INSTANTIATE_TEST_SUITE_P(UnseenNan, UnseenNan, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
