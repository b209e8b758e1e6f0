// Large finite scores on the cuda kernels (docs/numerics.md, finite inputs): q scaled so that
// the largest base-2 score bound is near 2^10 and 2^19, inside this backend's bound of 2^20
// (tests/emu/test_emu_large_scores.cpp holds the gfx950 kernels to 2^120). BF16 is held to the
// fp64 reference; FP8 to finite outputs and LSE only, since Hopper's FP8 wgmma accumulates the
// scores with about 2^-11 relative error, which at |s| ~ 2^19 is hundreds of base-2 units.
// Skips without a Hopper GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "cuda_test_util.h"
#include "support/fwd_matrix.h"
#include "support/large_scores.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() { return large_scores_matrix(300); }

class LargeScores : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(LargeScores, Cuda) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = GetParam();
  c.seed = seed_for("LargeScores/" + c.name());
  const AttnData base = make_attn_data(c);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  const bool fp8 = c.dtype != ZYFA_DTYPE_BF16;
  for (int target : {10, 19}) {
    const AttnData a = with_scores_near(base, target);
    const ReferenceResult ref = reference_fp64(a);
    std::vector<uint16_t> out;
    std::vector<float> lse;
    ASSERT_NO_FATAL_FAILURE(run_on_device(a, &out, &lse));
    const CheckResult r = check_output(a, ref, out.data(), nullptr);
    if (fp8) {
      EXPECT_EQ(r.nan_count, 0) << c.name() << " seed " << c.seed << ", scores near 2^" << target << ": " << r.summary();
      EXPECT_EQ(r.unwritten_count, 0) << c.name() << ", scores near 2^" << target << ": " << r.summary();
    } else {
      EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ", scores near 2^" << target << ": " << r.summary();
    }
    const LseError le = lse_error(a, ref, lse.data());
    EXPECT_EQ(le.nonfinite, 0) << "non-finite LSE values, scores near 2^" << target;
    if (!fp8)
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
