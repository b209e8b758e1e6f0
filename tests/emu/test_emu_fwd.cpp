// Every AMD attention kernel, run by the emulator through zyfa_fwd, against the fp64
// reference on the shared matrix of configurations; each output must also be bitwise identical
// under three different wave interleavings / memory-completion orders.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "emu_run.h"
#include "support/fwd_matrix.h"

namespace zyfa::test {
namespace {

// The shared matrix at sizes the emulator runs quickly (one to three 128-row tiles, 256-row
// tiles of the BF16 d 128 ping-pong kernel with a tail), then cases of that kernel: several
// tiles and a tail with std-1 scores (peaked rows, the lazy rescale taken and skipped); MQA.
std::vector<AttnConfig> configs() {
  std::vector<AttnConfig> v = fwd_matrix({{1, 37, 256, 300}, 4, 2, 37, 300, 640});
  using C = AttnConfig;
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 2, 2, 600).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 4, 1, 513).with(Inputs::REALISTIC).without_lse());
  return v;
}

class Fwd : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fwd, Emu) {
  AttnConfig c = GetParam();
  c.seed = seed_for(c.name());
  AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));

  const uint64_t interleavings[3] = {1, 0xC0FFEEull, test_seed()};
  HostRun first;
  for (int i = 0; i < 3; ++i) {
    HostRun run = run_emu(a, interleavings[i]);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << "interleaving seed " << interleavings[i] << ": " << run.error;
    EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
    if (!c.lse) EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
    if (i == 0) {
      const CheckResult r = check_output(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr);
      EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
      std::printf("%s: %s\n", c.name().c_str(), r.summary().c_str());
      first = std::move(run);
      continue;
    }
    EXPECT_EQ(0, std::memcmp(first.out.data(), run.out.data(), first.out.size() * 2))
        << "output differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
    if (c.lse)
      EXPECT_EQ(0, std::memcmp(first.lse.data(), run.lse.data(), first.lse.size() * 4))
          << "LSE differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Fwd, Fwd, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
