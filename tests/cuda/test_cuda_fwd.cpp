// Every supported configuration through zyfa_fwd on the cuda backend against the fp64
// reference, with poisoned outputs; tolerances are kernel_tolerance() (docs/numerics.md).
#include <gtest/gtest.h>

#include <cstdio>

#include "cuda_test_util.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    // Sequence lengths around the 128-row tile edges, and long enough for many key blocks.
    for (int64_t s : {1, 61, 127, 128, 129, 1000, 2048}) v.push_back(C::of(dt, 128, 8, 2, s));
    v.push_back(C::of(dt, 192, 8, 2, 1000));
    v.push_back(C::of(dt, 192, 2, 2, 67));
    v.push_back(C::of(dt, 128, 3, 3, 300));  // MHA
    v.push_back(C::of(dt, 128, 5, 1, 300));  // MQA
    v.push_back(C::of(dt, 192, 4, 1, 257));
    v.push_back(C::of(dt, 128, 4, 2, 300).with(Layout::BHSD));
    v.push_back(C::of(dt, 192, 4, 2, 300).with(Layout::BHSD));
    v.push_back(C::of(dt, 128, 4, 2, 300).with(Layout::PACKED_QKV));
    v.push_back(C::of(dt, 128, 2, 1, 500).with(Inputs::GAUSSIAN, 1.0));
    v.push_back(C::of(dt, 128, 4, 2, 1000).with(Inputs::REALISTIC));
    v.push_back(C::of(dt, 192, 2, 1, 700).with(Inputs::REALISTIC));
    // A new row maximum in every key block: the FP8 d 128 kernel's recomputation path each time.
    v.push_back(C::of(dt, 128, 4, 2, 1000).with(Inputs::RISING));
    v.push_back(C::of(dt, 192, 2, 1, 700).with(Inputs::RISING));
    v.push_back(C::of(dt, 128, 4, 2, 333).with_batch(3));
    v.push_back(C::of(dt, 128, 2, 2, 200).without_lse());
  }
  const auto fp8 = ZYFA_DTYPE_FP8_E4M3;
  v.push_back(C::of(fp8, 128, 4, 2, 397).with(DescaleMode::DEVICE_SCALAR).with_batch(2));
  v.push_back(C::of(fp8, 128, 4, 2, 397).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(fp8, 192, 6, 3, 271).with(Layout::BHSD).with(Inputs::GAUSSIAN, 1.0)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(3));
  v.push_back(C::of(fp8, 128, 4, 1, 271).with(Layout::PACKED_QKV).with(Inputs::REALISTIC)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  AttnConfig scaled = C::of(ZYFA_DTYPE_BF16, 128, 2, 1, 300).with(Inputs::GAUSSIAN, 1.0);
  scaled.softmax_scale = 0.25f;
  v.push_back(scaled);
  return v;
}

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
