// Finite inputs whose scaled scores fit in fp32 give finite outputs (docs/numerics.md), however
// large the scores: q is scaled so that the largest base-2 score bound is near 2^20, 2^64 and
// 2^120. Such rows are nearly one-hot; the output is held to the fp64 reference with the
// kernels' tolerance, and the LSE (whose absolute error grows with the score) to being finite
// and within what fp32 scores allow per row (lse_error, support/large_scores.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "emu_run.h"
#include "support/fwd_matrix.h"
#include "support/large_scores.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() { return large_scores_matrix(150); }

class LargeScores : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(LargeScores, Emu) {
  AttnConfig c = GetParam();
  c.seed = seed_for("LargeScores/" + c.name());
  const AttnData base = make_attn_data(c);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  // Held to the kernel tolerance at 2^10 only: the fp32 scores carry an absolute error of about
  // |s| * 2^-24, which from 2^20 on (2^-4 in base-2 units) decides near-tied keys of a peaked
  // row differently from the fp64 reference now and then; there the outputs must be written
  // and finite and the LSE within the fp32 bound of its row (at 2^10 the LSE only finite).
  for (int target : {10, 20, 64, 120}) {
    AttnData a = with_scores_near(base, target);
    const ReferenceResult ref = reference_fp64(a);
    HostRun run = run_emu(a, test_seed());
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    const CheckResult r = check_output(a, ref, run.out.data(), nullptr);
    if (target <= 10) {
      EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ", scores near 2^" << target << ": " << r.summary();
    } else {
      EXPECT_EQ(r.nan_count + r.unwritten_count, 0)
          << c.name() << " seed " << c.seed << ", scores near 2^" << target << ": " << r.summary();
    }
    const LseError le = lse_error(a, ref, run.lse.data());
    EXPECT_EQ(le.nonfinite, 0) << "non-finite LSE values, scores near 2^" << target;
    if (target > 10)  // at 2^10 only finite
      EXPECT_EQ(le.over_bound, 0) << "LSE rows past the fp32 score bound, scores near 2^" << target << " (worst "
                                  << le.worst_over << " x the bound)";
    std::printf("%s, scores near 2^%d: %s, LSE rel %.3g (%.2f x its bound)\n", c.name().c_str(), target,
                r.summary().c_str(), le.worst_rel, le.worst_over);
  }
}

INSTANTIATE_TEST_SUITE_P(LargeScores, LargeScores, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
