// Every AMD attention kernel, run by the emulator through zyfa_fwd, against the fp64
// reference on a matrix of small configurations; each output must also be bitwise identical
// under three different wave interleavings / memory-completion orders.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "emu_run.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    for (int64_t s : {1, 37, 256, 300}) v.push_back(C::of(dt, 128, 4, 2, s));  // GQA, sequence edges
    v.push_back(C::of(dt, 192, 2, 1, 37));                                       // d 192/128, MQA
    v.push_back(C::of(dt, 192, 2, 2, 256).with(Layout::BHSD));                   // MHA, bhsd
    v.push_back(C::of(dt, 128, 2, 2, 37).with(Layout::PACKED_QKV).without_lse());  // packed, no LSE
    v.push_back(C::of(dt, 128, 3, 1, 37).with_batch(2).with(Inputs::REALISTIC));
  }
  // Longer sequences: several jobs per persistent workgroup, many key blocks per tile.
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 8, 2, 1000));
  v.push_back(C::of(ZYFA_DTYPE_FP8_E4M3, 128, 8, 2, 1000));
  v.push_back(C::of(ZYFA_DTYPE_FP8_E4M3, 192, 2, 1, 300).with(Inputs::REALISTIC));
  // BF16 d 128 ping-pong kernel: 256-row tiles, so several tiles and a tail; std-1 scores
  // (peaked rows, the lazy rescale taken and skipped); MQA.
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 2, 2, 600).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 4, 1, 513).with(Inputs::REALISTIC).without_lse());
  // A new row maximum in every key block (the rescaling path of every block).
  v.push_back(C::of(ZYFA_DTYPE_BF16, 128, 2, 1, 300).with(Inputs::RISING));
  v.push_back(C::of(ZYFA_DTYPE_FP8_E4M3, 128, 2, 1, 300).with(Inputs::RISING));
  const auto fp8 = ZYFA_DTYPE_FP8_E4M3;
  v.push_back(C::of(fp8, 128, 4, 2, 37).with(DescaleMode::DEVICE_SCALAR));
  v.push_back(C::of(fp8, 128, 4, 2, 37).with(Layout::BHSD).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(fp8, 192, 2, 1, 37).with(DescaleMode::DEVICE_PER_HEAD));
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
