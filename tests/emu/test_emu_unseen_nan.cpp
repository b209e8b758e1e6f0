// NaN and Inf that a query cannot see (keys/values after its causal limit, bytes after each
// tensor) must leave its output bitwise unchanged, on every AMD kernel run by the emulator;
// a row that does see them must not come out finite.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "emu_run.h"
#include "support/unseen_garbage.h"

namespace zyfa::test {
namespace {

std::vector<AttnConfig> configs() {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    v.push_back(C::of(dt, 128, 2, 1, 200));
    v.push_back(C::of(dt, 192, 2, 1, 200));
    v.push_back(C::of(dt, 128, 2, 2, 77).with(Layout::BHSD).with_batch(2));
  }
  return v;
}

class UnseenNan : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(UnseenNan, Emu) {
  AttnConfig c = GetParam();
  c.seed = seed_for("UnseenNan/" + c.name());
  AttnData a = make_attn_data(c);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  const uint64_t interleave = test_seed();
  HostRun clean = run_emu(a, interleave);
  ASSERT_EQ(clean.status, ZYFA_STATUS_SUCCESS) << clean.error;

  // Cuts inside a wave's 32 rows (150: rows 128-149 share the diagonal blocks with 150-159),
  // inside the first wave of a 128-row tile (40), the very first row, a seeded one, and none
  // (only the bytes after the tensors).
  std::mt19937_64 rng(c.seed);
  const int64_t S = c.seqlen;
  const struct { int64_t cut; Garbage g; } cases[] = {
      {std::min<int64_t>(150, S - 1), Garbage::KV}, {std::min<int64_t>(150, S - 1), Garbage::V},
      {40, Garbage::V}, {1, Garbage::K}, {1 + static_cast<int64_t>(rng() % (S - 1)), Garbage::KV},
      {S, Garbage::KV}};
  for (const auto& k : cases) {
    AttnData dirty = with_unseen_garbage(a, k.cut, k.g, rng());
    HostRun run = run_emu(dirty, interleave);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
    const std::string diff = compare_unseen(a, clean.out.data(), clean.lse.data(), run.out.data(),
                                            run.lse.data(), k.cut, k.g == Garbage::V);
    EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ", garbage in " << to_string(k.g)
                              << " from row " << k.cut << ": " << diff;
  }
}

INSTANTIATE_TEST_SUITE_P(UnseenNan, UnseenNan, ::testing::ValuesIn(configs()),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
