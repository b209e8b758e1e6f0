// NaN and Inf that a query cannot see (keys/values after its causal limit, bytes after each
// tensor) must leave its output bitwise unchanged, on every AMD kernel run by the emulator;
// a row that does see them must not come out finite.
#include <gtest/gtest.h>

#include <utility>

#include "emu_run.h"
#include "support/fwd_matrix.h"
#include "support/seeded.h"
#include "support/unseen_garbage.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() { return unseen_nan_matrix(200, 2, 1); }

class UnseenNan : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(UnseenNan, Emu) {
  const AttnConfig c = seeded(GetParam(), "UnseenNan/");
  const uint64_t interleave = test_seed();
  // Cut 150: rows 128-149 share the diagonal blocks of a wave's 32 rows with 150-159.
  expect_unseen_rows_unchanged_on_host(make_attn_data(c), 150, [&](AttnData& a) { return run_emu(a, interleave); });
}

INSTANTIATE_TEST_SUITE_P(UnseenNan, UnseenNan, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
