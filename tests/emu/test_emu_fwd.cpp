// Every AMD attention kernel, run by the emulator through zyfa_fwd, against the fp64
// reference on the shared matrix of configurations; each output must also be bitwise identical
// under three different wave interleavings / memory-completion orders.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "emu_run.h"
#include "support/fwd_matrix.h"
#include "support/seeded.h"

namespace zyfa::test {
namespace {

// The shared matrix at sizes the emulator runs quickly (one to three 128-row tiles, 256-row
// tiles of the BF16 ping-pong kernels with a tail), then cases of those kernels: several
// tiles and a tail with std-1 scores (peaked rows, the lazy rescale taken and skipped), for
// BF16 d 128 and d 192/128 and FP8 d 192/128; MQA.
std::vector<AttnConfig> configs() {
  std::vector<AttnConfig> v = fwd_matrix({{1, 37, 256, 300}, 4, 2, 37, 300, 640});
  using C = AttnConfig;
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 2, 2, 600).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(ZYFA_DTYPE_BF16, 192, 2, 2, 600).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(ZYFA_DTYPE_FP8_E4M3, 192, 2, 2, 600).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 4, 1, 513).with(Inputs::REALISTIC).without_lse());
  return v;
}

class Fwd : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fwd, Emu) {
  const AttnConfig c = seeded(GetParam());
  AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));

  HostRun first;
  ASSERT_NO_FATAL_FAILURE(run_emu_interleavings(a, {1, 0xC0FFEEull, test_seed()}, &first));
  const CheckResult r = check_output(a, ref, first.out.data(), c.lse ? first.lse.data() : nullptr);
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  std::printf("%s: %s\n", c.name().c_str(), r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Fwd, Fwd, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
