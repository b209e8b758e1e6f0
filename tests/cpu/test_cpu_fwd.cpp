// Every supported configuration through zyfa_fwd on the cpu backend against the fp64
// reference: each output must be the reference rounded once to BF16 (within 2^-8 relative).
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace zyfa::test {
namespace {

AttnConfig cfg(zyfa_dtype_t dt, int64_t dq, int64_t dv, int64_t h, int64_t hk, int64_t s,
               Layout l = Layout::BSHD, Inputs in = Inputs::GAUSSIAN, double std = 0.1,
               DescaleMode ds = DescaleMode::HOST, int64_t b = 1, bool lse = true) {
  AttnConfig c;
  c.dtype = dt;
  c.d_qk = dq;
  c.d_v = dv;
  c.heads = h;
  c.heads_k = hk;
  c.seqlen = s;
  c.layout = l;
  c.inputs = in;
  c.std = std;
  c.descale = ds;
  c.batch = b;
  c.lse = lse;
  return c;
}

std::vector<AttnConfig> configs() {
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    // Sequence lengths: 1, primes around tile edges, and 1000.
    for (int64_t s : {1, 2, 61, 67, 131, 1000}) v.push_back(cfg(dt, 128, 128, 8, 2, s));
    v.push_back(cfg(dt, 192, 128, 8, 2, 1000));
    v.push_back(cfg(dt, 192, 128, 2, 2, 67));
    v.push_back(cfg(dt, 128, 128, 3, 3, 131));   // MHA
    v.push_back(cfg(dt, 128, 128, 5, 1, 131));   // MQA
    v.push_back(cfg(dt, 192, 128, 4, 1, 97));
    v.push_back(cfg(dt, 128, 128, 4, 2, 97, Layout::BHSD));
    v.push_back(cfg(dt, 192, 128, 4, 2, 97, Layout::BHSD));
    v.push_back(cfg(dt, 128, 128, 4, 2, 97, Layout::PACKED_QKV));
    v.push_back(cfg(dt, 128, 128, 2, 1, 131, Layout::BSHD, Inputs::GAUSSIAN, 1.0));
    v.push_back(cfg(dt, 128, 128, 4, 2, 1000, Layout::BSHD, Inputs::REALISTIC));
    v.push_back(cfg(dt, 192, 128, 2, 1, 300, Layout::BSHD, Inputs::REALISTIC));
    v.push_back(cfg(dt, 128, 128, 4, 2, 73, Layout::BSHD, Inputs::GAUSSIAN, 0.1,
                    DescaleMode::HOST, 3));
    v.push_back(cfg(dt, 128, 128, 2, 2, 50, Layout::BSHD, Inputs::GAUSSIAN, 0.1,
                    DescaleMode::HOST, 1, false));
  }
  const auto fp8 = ZYFA_DTYPE_FP8_E4M3;
  v.push_back(cfg(fp8, 128, 128, 4, 2, 97, Layout::BSHD, Inputs::GAUSSIAN, 0.1,
                  DescaleMode::DEVICE_SCALAR, 2));
  v.push_back(cfg(fp8, 128, 128, 4, 2, 97, Layout::BSHD, Inputs::REALISTIC, 0.1,
                  DescaleMode::DEVICE_PER_HEAD, 2));
  v.push_back(cfg(fp8, 192, 128, 6, 3, 71, Layout::BHSD, Inputs::GAUSSIAN, 1.0,
                  DescaleMode::DEVICE_PER_HEAD, 3));
  v.push_back(cfg(fp8, 128, 128, 4, 1, 71, Layout::PACKED_QKV, Inputs::REALISTIC, 0.1,
                  DescaleMode::DEVICE_PER_HEAD, 2));
  AttnConfig scaled = cfg(ZYFA_DTYPE_BF16, 128, 128, 2, 1, 100, Layout::BSHD, Inputs::GAUSSIAN, 1.0);
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
  CpuRun run = run_cpu(a);
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
