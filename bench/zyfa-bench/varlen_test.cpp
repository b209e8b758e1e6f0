// zyfa-bench's varlen lengths and causal work (varlen.h, bench_config.h) against direct counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "bench_config.h"
#include "varlen.h"

namespace zyfa::bench {
namespace {

// Visible pairs counted one query at a time, straight from the bottom-right rule j <= i + Lk - Lq.
int64_t counted_pairs(int64_t lq, int64_t lk) {
  int64_t n = 0;
  for (int64_t i = 0; i < lq; ++i)
    for (int64_t j = 0; j < lk; ++j) n += j <= i + lk - lq;
  return n;
}

TEST(BenchVarlen, CausalPairsMatchTheMask) {
  for (int64_t lq = 0; lq <= 40; ++lq)
    for (int64_t lk = 0; lk <= 40; ++lk) ASSERT_EQ(causal_pairs(lq, lk), counted_pairs(lq, lk)) << lq << " " << lk;
  const int64_t seed = std::random_device{}() % 100000;
  std::printf("seed %lld\n", static_cast<long long>(seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 20; ++t) {
    const int64_t lq = rng() % 700, lk = rng() % 700;
    EXPECT_EQ(causal_pairs(lq, lk), counted_pairs(lq, lk)) << lq << " " << lk;
  }
}

TEST(BenchVarlen, EqualWorkLengthIsTheClosest) {
  for (int64_t pairs = 1; pairs < 3000; ++pairs) {
    const int64_t s = equal_work_seqlen(pairs);
    for (int64_t c = 1; c < 100; ++c)
      ASSERT_LE(std::llabs(causal_pairs(s, s) - pairs), std::llabs(causal_pairs(c, c) - pairs)) << pairs << " " << c;
  }
  // Large sums (a 64K-token batch) stay exact: S (S + 1) / 2 for S itself gives S back.
  for (int64_t s : {36000, 46341, 100000}) EXPECT_EQ(equal_work_seqlen(causal_pairs(s, s)), s);
}

TEST(BenchVarlen, EqualBatchLengthIsTheClosest) {
  for (int64_t batch : {1, 3, 16}) {
    for (int64_t extra : {0, 5}) {
      for (int64_t pairs = 1; pairs < 2000; pairs += 7) {
        const int64_t l = equal_batch_seqlen(pairs, batch, extra);
        for (int64_t c = 1; c < 100; ++c)
          ASSERT_LE(std::llabs(batch * causal_pairs(l, l + extra) - pairs),
                    std::llabs(batch * causal_pairs(c, c + extra) - pairs))
              << pairs << " " << batch << " " << extra << " " << c;
      }
    }
  }
  // Exact work gives its length back, at the sizes of the benchmark's batches too.
  for (int64_t l : {1, 721, 4096, 18311}) EXPECT_EQ(equal_batch_seqlen(16 * causal_pairs(l, l + 9), 16, 9), l);
}

TEST(BenchVarlen, ParsesListsAndSeededDraws) {
  VarlenLengths l;
  std::string err;
  ASSERT_TRUE(parse_varlen("5,17,0,130", 3, &l, &err)) << err;
  EXPECT_EQ(l.q, (std::vector<int64_t>{5, 17, 0, 130}));
  EXPECT_EQ(l.k, (std::vector<int64_t>{8, 20, 3, 133}));
  EXPECT_EQ(prefix_sums(l.q), (std::vector<int32_t>{0, 5, 22, 22, 152}));

  VarlenLengths a, b, c;
  ASSERT_TRUE(parse_varlen("random:16:256:8192:7", 0, &a, &err)) << err;
  ASSERT_TRUE(parse_varlen("random:16:256:8192:7", 0, &b, &err)) << err;
  ASSERT_TRUE(parse_varlen("random:16:256:8192:8", 0, &c, &err)) << err;
  EXPECT_EQ(a.q.size(), 16u);
  EXPECT_EQ(a.q, b.q);
  EXPECT_NE(a.q, c.q);
  EXPECT_EQ(a.q, a.k);
  for (int64_t x : a.q) EXPECT_TRUE(x >= 256 && x <= 8192) << x;
}

TEST(BenchVarlen, RefusesBadSpecsNamingThem) {
  VarlenLengths l;
  l.q = {42};
  std::string err;
  for (const char* bad : {"", "5,x", "5,-1", "0,0", "random:3:10:5:1", "random:0:1:2:3", "random:1:2:3"}) {
    err.clear();
    EXPECT_FALSE(parse_varlen(bad, 0, &l, &err)) << bad;
    EXPECT_NE(err.find("--varlen"), std::string::npos) << err;
  }
  EXPECT_FALSE(parse_varlen("5", -1, &l, &err));
  EXPECT_NE(err.find("--varlen-k-extra"), std::string::npos) << err;
  EXPECT_EQ(l.q, std::vector<int64_t>{42});  // untouched on error
  int64_t q = 0, k = 0;
  for (const char* bad : {"10:5", "0:5", "5", "a:b", "1:2:3"}) {
    EXPECT_FALSE(parse_chunk(bad, &q, &k, &err)) << bad;
    EXPECT_NE(err.find("--chunk"), std::string::npos) << err;
  }
  ASSERT_TRUE(parse_chunk("2048:16384", &q, &k, &err));
  EXPECT_EQ(q, 2048);
  EXPECT_EQ(k, 16384);
}

TEST(BenchVarlen, ConfigFlopsAndEqualWork) {
  Config c;
  c.heads = 3;
  c.heads_k = 3;
  c.lens_q = {5, 17, 0, 130};
  c.lens_k = {8, 20, 3, 133};
  c.seqlen = 152;
  c.seqlen_k = 164;
  int64_t pairs = 0;
  for (size_t i = 0; i < c.lens_q.size(); ++i) pairs += counted_pairs(c.lens_q[i], c.lens_k[i]);
  EXPECT_EQ(c.pairs(), pairs);
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * pairs * 256 * 3);
  const Config e = equal_work_config(c);
  EXPECT_FALSE(e.varlen());
  EXPECT_EQ(e.batch, 1);
  EXPECT_EQ(e.seqlen, e.seqlen_k);
  EXPECT_EQ(e.seqlen, equal_work_seqlen(pairs));
  const Config eb = equal_batch_config(c);
  EXPECT_FALSE(eb.varlen());
  EXPECT_EQ(eb.batch, 4);
  EXPECT_EQ(eb.seqlen_k, eb.seqlen + 3);
  EXPECT_EQ(eb.seqlen, equal_batch_seqlen(pairs, 4, 3));
  EXPECT_EQ(eb.heads, 3);
  // Fixed lengths: B sequences of (S, S_k).
  Config f;
  f.batch = 2;
  f.seqlen = 64;
  f.seqlen_k = 300;
  EXPECT_EQ(f.pairs(), 2 * counted_pairs(64, 300));
}

}  // namespace
}  // namespace zyfa::bench
