// Every supported configuration through zyfa_fwd on the cuda backend against the fp64
// reference, with poisoned outputs; tolerances are kernel_tolerance() (docs/numerics.md).
#include <gtest/gtest.h>

#include <cstdio>

#include "cuda_test_util.h"
#include "support/fwd_matrix.h"

namespace zyfa::test {
namespace {

// Sequence lengths around the 128-row tile edges, and long enough for many key blocks.
std::vector<AttnConfig> configs() { return fwd_matrix({{1, 61, 127, 128, 129, 1000, 2048}, 8, 2, 300, 700, 1000}); }

class Fwd : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fwd, Cuda) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = GetParam();
  c.seed = seed_for(c.name());
  const AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);
  DeviceCase dev(a);
  ASSERT_TRUE(dev.ok()) << "device buffers";
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  const zyfa_fwd_desc_t d = dev.desc();
  const zyfa_status_t s = zyfa_fwd(h, &d);
  ASSERT_EQ(s, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> out;
  std::vector<float> lse;
  dev.download(&out, &lse);
  ASSERT_TRUE(dev.ok());
  zyfa_destroy(h);
  const CheckResult r = check_output(a, ref, out.data(), c.lse ? lse.data() : nullptr);
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  EXPECT_TRUE(guard_intact(out, a.out_count())) << "write past the output";
  EXPECT_TRUE(is_poison_f32(lse[a.lse_count()])) << "write past the LSE";
  if (!c.lse) EXPECT_TRUE(is_poison_f32(lse[0])) << "LSE written although not asked for";
  RecordProperty("rel_rms", std::to_string(r.rel_rms));
  std::printf("%s seed %llu: %s\n", c.name().c_str(), static_cast<unsigned long long>(c.seed),
              r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(, Fwd, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
