// Every supported configuration through zyfa_fwd on the cpu backend against the fp64
// reference: each output must be the reference rounded once to BF16 (within 2^-8 relative).
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    // Sequence lengths: 1, primes around tile edges, and 1000.
    for (int64_t s : {1, 2, 61, 67, 131, 1000}) v.push_back(C::of(dt, 128, 8, 2, s));
    v.push_back(C::of(dt, 192, 8, 2, 1000));
    v.push_back(C::of(dt, 192, 2, 2, 67));
    v.push_back(C::of(dt, 128, 3, 3, 131));  // MHA
    v.push_back(C::of(dt, 128, 5, 1, 131));  // MQA
    v.push_back(C::of(dt, 192, 4, 1, 97));
    v.push_back(C::of(dt, 128, 4, 2, 97).with(Layout::BHSD));
    v.push_back(C::of(dt, 192, 4, 2, 97).with(Layout::BHSD));
    v.push_back(C::of(dt, 128, 4, 2, 97).with(Layout::PACKED_QKV));
    v.push_back(C::of(dt, 128, 2, 1, 131).with(Inputs::GAUSSIAN, 1.0));
    v.push_back(C::of(dt, 128, 4, 2, 1000).with(Inputs::REALISTIC));
    v.push_back(C::of(dt, 192, 2, 1, 300).with(Inputs::REALISTIC));
    v.push_back(C::of(dt, 128, 2, 1, 400).with(Inputs::RISING));
    v.push_back(C::of(dt, 128, 4, 2, 73).with_batch(3));
    v.push_back(C::of(dt, 128, 2, 2, 50).without_lse());
  }
  const auto fp8 = ZYFA_DTYPE_FP8_E4M3;
  v.push_back(C::of(fp8, 128, 4, 2, 97).with(DescaleMode::DEVICE_SCALAR).with_batch(2));
  v.push_back(C::of(fp8, 128, 4, 2, 97).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(fp8, 192, 6, 3, 71).with(Layout::BHSD).with(Inputs::GAUSSIAN, 1.0)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(3));
  v.push_back(C::of(fp8, 128, 4, 1, 71).with(Layout::PACKED_QKV).with(Inputs::REALISTIC)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  AttnConfig scaled = C::of(ZYFA_DTYPE_BF16, 128, 2, 1, 100).with(Inputs::GAUSSIAN, 1.0);
  scaled.softmax_scale = 0.25f;
  v.push_back(scaled);
  return v;
}

class Fwd : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fwd, Cpu) {
  AttnConfig c = GetParam();
  c.seed = seed_for(c.name());
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
