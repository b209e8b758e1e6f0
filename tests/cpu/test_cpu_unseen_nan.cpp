// NaN and Inf that a query cannot see (keys/values after its causal limit, bytes after each
// tensor) leave its output bitwise unchanged on the cpu backend; a row that sees a non-finite
// value of V does not come out finite.
#include <gtest/gtest.h>

#include <utility>

#include "cpu_test_util.h"
#include "support/fwd_matrix.h"
#include "support/unseen_garbage.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() { return unseen_nan_matrix(200, 4, 2); }

class UnseenNan : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(UnseenNan, Cpu) {
  AttnConfig c = GetParam();
  c.seed = seed_for("UnseenNan/" + c.name());
  expect_unseen_rows_unchanged(make_attn_data(c), 150, [](AttnData& a, auto* out, auto* lse) {
    HostRun run = run_cpu(a);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
    *out = std::move(run.out);
    *lse = std::move(run.lse);
  });
}

INSTANTIATE_TEST_SUITE_P(UnseenNan, UnseenNan, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
