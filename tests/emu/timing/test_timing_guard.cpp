// Speed regression guard for the shipped gfx950 kernels: each one's predicted MI355X cost at a
// small shape (timing model, every busy CU simulated) against predicted_cycles.txt, which a
// change that makes a kernel slower must update in the same commit. Fails when a kernel's
// cycles per key block grow by more than 3%; prints the line to write in either direction.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "model.h"
#include "support/host_run.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

constexpr double kSlowerLimit = 1.03;
constexpr int64_t kSeqlen = 512, kHeads = 2, kKeyBlock = 128;

std::map<std::string, double> recorded() {
  std::map<std::string, double> m;
  std::ifstream f(std::string(ZYFA_TIMING_GUARD_FILE));
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    double v = 0;
    if (ss >> name >> v) m[name] = v;
  }
  return m;
}

struct GuardCase {
  const char* name;
  zyfa_dtype_t dtype;
  int64_t d_qk;
};

class TimingGuard : public ::testing::TestWithParam<GuardCase> {};

TEST_P(TimingGuard, NotSlowerThanRecorded) {
  const GuardCase g = GetParam();
  AttnConfig cfg = AttnConfig::of(g.dtype, g.d_qk, kHeads, kHeads, kSeqlen);
  AttnData data = make_attn_data(cfg);
  std::vector<emu::timing::Prediction> launches;
  {
    bench::ModelRecorder rec(0);
    const HostRun r = run_on_host(data, ZYFA_BACKEND_EMU);
    ASSERT_EQ(r.status, ZYFA_STATUS_SUCCESS) << r.error;
    launches = rec.take();
  }
  ASSERT_FALSE(launches.empty());
  const emu::timing::Prediction& p = launches.back();  // the attention kernel
  ASSERT_TRUE(p.ok) << p.error;
  // Cycles per causal 128 x 128 block of one head, over the busy CUs.
  const int64_t n = kSeqlen / kKeyBlock;
  const double blocks = double(kHeads) * double(n * (n + 1) / 2);
  const double per_block = double(p.cycles) * p.cus_busy / blocks;
  std::printf("%s %.1f\n%s (%s, launch %zu of %zu)\n", g.name, per_block, p.json().c_str(), p.kernel.c_str(),
              launches.size(), launches.size());
  const auto rec = recorded();
  const auto it = rec.find(g.name);
  ASSERT_NE(it, rec.end()) << "no line for " << g.name << " in " << ZYFA_TIMING_GUARD_FILE << "; add: " << g.name
                           << " " << per_block;
  EXPECT_LE(per_block, it->second * kSlowerLimit)
      << g.name << " is predicted " << 100.0 * (per_block / it->second - 1) << "% slower than recorded ("
      << per_block << " vs " << it->second << " cycles per key block); if intended, write '" << g.name << " "
      << per_block << "' into " << ZYFA_TIMING_GUARD_FILE;
  if (per_block < it->second / kSlowerLimit)
    std::printf("note: %s is %.1f%% faster than recorded; record '%s %.1f'\n", g.name,
                100.0 * (1 - per_block / it->second), g.name, per_block);
}

INSTANTIATE_TEST_SUITE_P(Shipped, TimingGuard,
                         ::testing::Values(GuardCase{"bf16_d128", ZYFA_DTYPE_BF16, 128},
                                           GuardCase{"bf16_d192", ZYFA_DTYPE_BF16, 192},
                                           GuardCase{"fp8_d128", ZYFA_DTYPE_FP8_E4M3, 128},
                                           GuardCase{"fp8_d192", ZYFA_DTYPE_FP8_E4M3, 192}),
                         [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace zyfa::test
