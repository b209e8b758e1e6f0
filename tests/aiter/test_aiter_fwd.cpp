// AMD AITER's gfx950 forward kernels (code nobody here wrote) on the emulator under the
// hardware rule set, against the fp64 reference: output relative RMS < 1e-2 and LSE within
// 1e-4 relative. Skipped with a message when bench/aiter/fetch-aiter-kernels.sh has not put
// the kernels into .cache/aiter (cmake/setup.sh does).
//
// AITER's look-ahead prefetch of the K tile after the last one reads past the end of K: the
// buffer's soffset is outside the gfx9 range check, so the access is real and the emulator
// reports it as out of bounds. The inputs get that slack (aiter_inputs.h), as allocations on
// the GPU have.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "aiter_fmha_v3.h"
#include "aiter_inputs.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

struct Case {
  int d_qk;
  int seqlen;
  uint64_t seed;
};

std::string case_name(const Case& c) {
  return "Bf16_D" + std::to_string(c.d_qk) + "_Causal_S" + std::to_string(c.seqlen) + "_Seed" + std::to_string(c.seed);
}

bool have_kernels(const std::string& dir, const aiter::KernelChoice& k) {
  struct stat st;
  return stat((dir + "/fmha_v3_fwd/" + k.file()).c_str(), &st) == 0;
}

class AiterFwd : public ::testing::TestWithParam<Case> {};

TEST_P(AiterFwd, MatchesFp64UnderHardwareRules) {
  const Case c = GetParam();
  const aiter::KernelChoice kernel{c.d_qk, true};
  const std::string dir = aiter::cache_dir();
  if (!have_kernels(dir, kernel))
    GTEST_SKIP() << "AITER kernels not found in " << dir
                 << " (run bench/aiter/fetch-aiter-kernels.sh, or cmake/setup.sh, to fetch them)";

  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_BF16, c.d_qk, 1, 1, c.seqlen);
  cfg.seed = c.seed;
  std::printf("%s: input seed %llu, interleaving seed %llu\n", case_name(c).c_str(),
              static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(c.seed));
  AttnData data = make_attn_data(cfg);
  const ReferenceResult ref = reference_fp64(data);

  AiterInputs in = aiter_inputs(cfg, data, kernel);
  emu::DispatchOptions opt;
  opt.seed = c.seed;
  opt.rules = emu::RuleSet::kHardware;
  const emu::DispatchResult r = aiter::run(dir, kernel, in.problem, opt);
  ASSERT_TRUE(r.ok) << r.error;
  // The warnings, summed per rule (one line per instruction would be ~200 lines).
  std::map<std::string, std::array<uint64_t, 3>> per_rule;  // instructions, times, fewest given
  for (const emu::RuleWarning& w : r.warnings) {
    auto& n = per_rule.try_emplace(w.rule, std::array<uint64_t, 3>{0, 0, UINT64_MAX}).first->second;
    n[0] += 1;
    n[1] += w.count;
    n[2] = std::min<uint64_t>(n[2], uint64_t(w.given));
  }
  for (const auto& [rule, n] : per_rule)
    std::printf("  hardware rules: %s at %llu instruction(s), %llu time(s), fewest wait states %llu\n", rule.c_str(),
                static_cast<unsigned long long>(n[0]), static_cast<unsigned long long>(n[1]),
                static_cast<unsigned long long>(n[2]));

  // Output: relative RMS < 1e-2 (BF16 P and output rounding), every element written, no NaN.
  // LSE: 1e-4 relative to the largest reference LSE magnitude (a row's own LSE can be ~0).
  double lse_scale = 1.0;
  for (double x : ref.lse) lse_scale = std::max(lse_scale, std::fabs(x));
  Tolerance tol = kernel_tolerance(cfg);
  tol.rel_rms = 1e-2;
  tol.lse_abs = 1e-4 * lse_scale;
  const CheckResult chk = check_output(data, ref, in.out.data(), in.lse.data(), tol);
  std::printf("  %s\n", chk.summary().c_str());
  EXPECT_TRUE(chk.ok()) << chk.summary();
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int d : {128, 192})
    for (int s : {256, 300})
      for (uint64_t seed : {1, 2, 3}) v.push_back({d, s, seed});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Aiter, AiterFwd, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

}  // namespace
}  // namespace zyfa::test
