// The varlen job-table builder (kernels/varlen/varlen_jobs.h), run on the host: every query
// tile of every sequence and head exactly once, paired first with last within its sequence,
// CTAs within one job of an equal share of the work, the table within the size the host
// allocates from the maxima; and bad prefix sums clamped into the tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/varlen/varlen_jobs.h"
#include "support/zyfa_test_support.h"

namespace zyfa::varlen {
namespace {

struct Built {
  std::vector<uint32_t> words;
  uint32_t jobs = 0;
};

Built build(const std::vector<int32_t>& cu_q, const std::vector<int32_t>& cu_k, const Shape& s) {
  std::vector<uint32_t> job_start(s.batch + 1);
  std::vector<uint32_t> buckets(cost_buckets(s));
  Built b;
  b.words.assign(table_words(s), 0xDEADBEEFu);
  b.jobs = build_serial(cu_q.data(), cu_k.data(), s, job_start.data(), buckets.data(), b.words.data());
  return b;
}

// Brute force: key blocks holding a key that some row of tile m sees.
uint32_t blocks_brute(const Seq& q, uint32_t m, const Shape& s) {
  std::vector<bool> seen((q.lk + s.block_n - 1) / s.block_n + 1, false);
  for (int64_t i = int64_t(m) * s.tile_rows; i < std::min<int64_t>(int64_t(m + 1) * s.tile_rows, q.lq); ++i)
    for (int64_t j = 0; j < q.lk && j <= i + q.lk - q.lq; ++j) seen[j / s.block_n] = true;
  return static_cast<uint32_t>(std::count(seen.begin(), seen.end(), true));
}

// Checks a table against the lengths the builder was given (after clamping).
void check_table(const Built& t, const std::vector<int32_t>& cu_q, const std::vector<int32_t>& cu_k, const Shape& s,
                 const std::string& what) {
  const uint32_t G = static_cast<uint32_t>(s.grid), nt = n_tiles(s);
  ASSERT_LE(t.jobs, job_capacity(s)) << what;
  ASSERT_EQ(t.words[0], G) << what;
  ASSERT_EQ(t.words[1], nt) << what;
  ASSERT_EQ(t.words[2], 0u) << what;
  ASSERT_EQ(t.words[2 + G], t.jobs) << what;
  std::vector<int> count(size_t(s.batch) * s.heads * nt, 0);
  std::vector<uint64_t> cta_cost(G, 0);
  uint64_t total = 0, max_job = 0;
  for (uint32_t w = 0; w < G; ++w) {
    ASSERT_LE(t.words[2 + w], t.words[3 + w]) << what << ": offsets of CTA " << w;
    uint64_t previous = ~uint64_t{0};
    for (uint32_t j = t.words[2 + w]; j < t.words[3 + w]; ++j) {
      const uint32_t a = t.words[3 + G + 2 * j], b = t.words[4 + G + 2 * j];
      uint64_t cost = 0;
      for (uint32_t tile : {a, b}) {
        if (tile == kNoTile) continue;
        ASSERT_LT(tile, count.size()) << what << ": job " << j;
        ++count[tile];
        const int32_t seq = static_cast<int32_t>(tile / nt / s.heads);
        const Seq q = seq_at(cu_q.data(), cu_k.data(), seq, s);
        const uint32_t m = tile % nt;
        ASSERT_LT(m, tiles_of(q, s)) << what << ": tile past sequence " << seq;
        cost += tile_blocks(q, m, s) + kTileOverhead;  // checked against the mask below
      }
      ASSERT_NE(a, kNoTile) << what;
      if (b != kNoTile) {
        const Seq q = seq_at(cu_q.data(), cu_k.data(), static_cast<int32_t>(a / nt / s.heads), s);
        EXPECT_EQ(a / nt, b / nt) << what << ": a pair across streams";
        EXPECT_EQ(a % nt + b % nt, tiles_of(q, s) - 1) << what << ": not first with last";
      }
      EXPECT_LE(cost, previous) << what << ": CTA " << w << " runs a job after a cheaper one";
      previous = cost;
      cta_cost[w] += cost;
      total += cost;
      max_job = std::max(max_job, cost);
    }
  }
  for (int32_t b = 0; b < s.batch; ++b) {
    const Seq q = seq_at(cu_q.data(), cu_k.data(), b, s);
    for (int32_t h = 0; h < s.heads; ++h)
      for (uint32_t m = 0; m < nt; ++m)
        ASSERT_EQ(count[(size_t(b) * s.heads + h) * nt + m], m < tiles_of(q, s) ? 1 : 0)
            << what << ": sequence " << b << " head " << h << " tile " << m;
  }
  // Every CTA within one job of every other (hence of its share); the job counts of the
  // deal (one job per CTA and round) differ by at most one.
  const auto [lo, hi] = std::minmax_element(cta_cost.begin(), cta_cost.end());
  EXPECT_LE(*hi - *lo, max_job) << what << ": CTAs " << (lo - cta_cost.begin()) << " and " << (hi - cta_cost.begin());
  for (uint32_t w = 0; w < G; ++w) {
    EXPECT_LE(cta_cost[w] * G, total + uint64_t(G) * max_job) << what << ": CTA " << w << " has more than its share";
    EXPECT_LE(t.words[3 + w] - t.words[2 + w], t.jobs / G + 1) << what << ": CTA " << w;
  }
}

std::vector<int32_t> prefix(const std::vector<int32_t>& lens, int32_t start) {
  std::vector<int32_t> cu{start};
  for (int32_t l : lens) cu.push_back(cu.back() + l);
  return cu;
}

TEST(VarlenJobs, TileBlocksMatchTheMask) {
  std::mt19937_64 rng(test::seed_for("VarlenJobs/TileBlocks"));
  const Shape s{1, 1, 128, 128, 4096, 4096, 1 << 20, 1 << 20, 1};
  for (int i = 0; i < 300; ++i) {
    Seq q{0, 0, int32_t(rng() % 700), int32_t(rng() % 900)};
    for (uint32_t m = 0; m < tiles_of(q, s); ++m)
      ASSERT_EQ(tile_blocks(q, m, s), blocks_brute(q, m, s)) << "lq " << q.lq << " lk " << q.lk << " tile " << m;
  }
}

TEST(VarlenJobs, RandomLengthsEveryTileOnceBalanced) {
  const uint64_t seed = test::seed_for("VarlenJobs/Random");
  std::printf("seed %llu\n", (unsigned long long)seed);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t batch = 1 + int32_t(rng() % 20), heads = 1 + int32_t(rng() % 8);
    const int32_t grid = std::vector<int32_t>{1, 7, 132}[rng() % 3];
    const int32_t max_q = 1 + int32_t(rng() % 2000), max_k = max_q + int32_t(rng() % 3000);
    std::vector<int32_t> lq(batch), lk(batch);
    for (int32_t b = 0; b < batch; ++b) {
      lq[b] = rng() % 5 == 0 ? 0 : int32_t(rng() % (max_q + 1));
      lk[b] = rng() % 4 == 0 ? int32_t(rng() % (lq[b] + 1)) : std::min(max_k, lq[b] + int32_t(rng() % (max_k - lq[b] + 1)));
    }
    const std::vector<int32_t> cu_q = prefix(lq, 3), cu_k = prefix(lk, 0);
    const Shape s{batch, heads, 128, 128, max_q, max_k, cu_q.back() + 5, cu_k.back(), grid};
    const Built t = build(cu_q, cu_k, s);
    ASSERT_NO_FATAL_FAILURE(check_table(t, cu_q, cu_k, s, "trial " + std::to_string(trial)));
    for (int32_t b = 0; b < batch; ++b) {
      const Seq q = seq_at(cu_q.data(), cu_k.data(), b, s);
      ASSERT_EQ(q.lq, lq[b]);
      ASSERT_EQ(q.lk, lk[b]);
    }
  }
}

// Garbage prefix sums (negative, decreasing, past the tensors or the maxima): every sequence
// read stays inside the tensors and within the maxima, and the table inside its allocation.
TEST(VarlenJobs, BadPrefixSumsAreClamped) {
  std::mt19937_64 rng(test::seed_for("VarlenJobs/Bad"));
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t batch = 1 + int32_t(rng() % 12);
    std::vector<int32_t> cu_q(batch + 1), cu_k(batch + 1);
    for (auto* cu : {&cu_q, &cu_k})
      for (int32_t& x : *cu) x = int32_t(rng() % 5 == 0 ? int64_t(rng() % 0x100000000ull) - 0x80000000ll : int64_t(rng() % 3000) - 500);
    const Shape s{batch, 4, 128, 128, 700, 900, 2000, 1500, 7};
    for (int32_t b = 0; b < batch; ++b) {
      const Seq q = seq_at(cu_q.data(), cu_k.data(), b, s);
      ASSERT_TRUE(q.q0 >= 0 && q.lq >= 0 && q.q0 + q.lq <= s.total_q && q.lq <= s.max_q) << "trial " << trial;
      ASSERT_TRUE(q.k0 >= 0 && q.lk >= 0 && q.k0 + q.lk <= s.total_k && q.lk <= s.max_k) << "trial " << trial;
    }
    const Built t = build(cu_q, cu_k, s);
    ASSERT_NO_FATAL_FAILURE(check_table(t, cu_q, cu_k, s, "bad trial " + std::to_string(trial)));
  }
}

}  // namespace
}  // namespace zyfa::varlen
