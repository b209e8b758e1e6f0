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
  std::string summary;
  const std::string diff = host_varlen_difference(c, ZYFA_BACKEND_CPU, cpu_tolerance(), &summary);
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
  std::printf("%s seed %llu: %s\n", c.name().c_str(), (unsigned long long)c.seed, summary.c_str());
}

INSTANTIATE_TEST_SUITE_P(Varlen, Varlen, ::testing::ValuesIn(varlen_matrix()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on: rows whose visible keys all lie
// before the cut are bitwise unchanged, rows that see one are not finite.
class VarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(VarlenUnseenNan, Cpu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("VarlenUnseenNan/" + c.name());
  const std::string diff = host_varlen_unseen_nan_difference(c, ZYFA_BACKEND_CPU);
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
