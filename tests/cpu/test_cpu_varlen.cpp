// Varlen batches and seqlen_k > seqlen_q (bottom-right causal) on the cpu backend against the
// fp64 reference: mixed lengths with 0, 1 and tails, chunked prefill, rows that see no key,
// GQA/MQA, both head dims and dtypes, peaked inputs; NaN in the rows around the sequences and
// after each tensor, and after each sequence's last visible key, must never be seen.
#include <gtest/gtest.h>

#include "cpu_test_util.h"
#include "support/varlen.h"

namespace zyfa::test {
namespace {

class Varlen : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Varlen, Cpu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("Varlen/" + c.name());
  VarlenData a = make_varlen_data(c);
  const ReferenceResult ref = reference_varlen_fp64(a);
  HostRun run = run_on_host(a, ZYFA_BACKEND_CPU);
  ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
  const CheckResult r = check_varlen(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr, cpu_tolerance());
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
  if (!c.lse) EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
  std::printf("%s seed %llu: %s\n", c.name().c_str(), (unsigned long long)c.seed, r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Varlen, Varlen, ::testing::ValuesIn(varlen_matrix()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on: rows whose visible keys all lie
// before the cut are bitwise unchanged, rows that see one are not finite.
class VarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(VarlenUnseenNan, Cpu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("VarlenUnseenNan/" + c.name());
  const std::string diff = varlen_unseen_nan_difference(c, [](VarlenData& d) {
    HostRun r = run_on_host(d, ZYFA_BACKEND_CPU);
    return VarlenOutputs{r.status, r.error, std::move(r.out), std::move(r.lse)};
  });
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
}

std::vector<VarlenConfig> unseen_configs() {
  std::vector<VarlenConfig> m;
  for (const VarlenConfig& c : varlen_matrix())
    if (c.d_qk == 128 && c.inputs == Inputs::GAUSSIAN) m.push_back(c);
  return m;
}

INSTANTIATE_TEST_SUITE_P(VarlenUnseenNan, VarlenUnseenNan, ::testing::ValuesIn(unseen_configs()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
