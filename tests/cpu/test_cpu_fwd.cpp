// Every supported configuration through zyfa_fwd on the cpu backend against the fp64
// reference: each output must be the reference rounded once to BF16 (within 2^-8 relative).
#include <gtest/gtest.h>

#include "cpu_test_util.h"
#include "support/fwd_matrix.h"
#include "support/seeded.h"

namespace zyfa::test {
namespace {

// Sequence lengths: 1, primes around tile edges, and 1000.
std::vector<AttnConfig> configs() { return fwd_matrix({{1, 2, 61, 67, 131, 1000}, 8, 2, 97, 300, 1000}); }

class Fwd : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fwd, Cpu) {
  const AttnConfig c = seeded(GetParam());
  AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);
  HostRun run = run_cpu(a);
  ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
  const CheckResult r =
      check_output(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr, cpu_tolerance());
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
  if (!c.lse) EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
  RecordProperty("rel_rms", std::to_string(r.rel_rms));
  std::printf("%s: %s\n", c.name().c_str(), r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Cpu, Fwd, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
