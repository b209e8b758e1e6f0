// Non-finite values where a query cannot see them: in the keys/values of rows at or after a
// cut (every batch and KV head) and in the bytes after the end of each input tensor. A query
// row before the cut must come out bitwise as it did on the clean inputs; a row at or after
// the cut sees the garbage and must not come out finite where it saw a NaN/Inf value.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/host_run.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

// Which of K and V get garbage in the rows at or after the cut. KV and K write every element
// of those rows (NaN and ±Inf); V writes one element per (row, head) with a NaN or ±Inf
// (BF16) or a NaN code (FP8), so that a row that sees it has a finite score and only V can
// make it non-finite.
enum class Garbage { KV, K, V };
const char* to_string(Garbage);

// Bytes of garbage appended after each of q, k and v.
inline constexpr size_t kTrailBytes = 4096;

// A copy of `clean` with the garbage written (seeded), and kTrailBytes of NaN/Inf bytes after
// each tensor. cut = seqlen leaves only the trailing bytes.
AttnData with_unseen_garbage(const AttnData& clean, int64_t cut, Garbage g, uint64_t seed);

// Empty when every output element and LSE value of the rows before `cut` is bitwise the same
// in both runs (and, with check_seen, every (row >= cut, head) of `dirty` holds a NaN or Inf
// when the garbage was written into V); else a description of the first difference.
std::string compare_unseen(const AttnData& a, const uint16_t* clean_out, const float* clean_lse,
                           const uint16_t* dirty_out, const float* dirty_lse, int64_t cut,
                           bool check_seen);

// The cuts every backend runs: `near` (a cut inside the rows of a tile's diagonal block) with
// garbage in K and V and in V alone, 40 (inside the first tile), 1 (keys only), a seeded cut,
// and seqlen (only the bytes after the tensors).
struct UnseenCase {
  int64_t cut;
  Garbage g;
};
std::vector<UnseenCase> unseen_cases(int64_t seqlen, int64_t near, std::mt19937_64& rng);

// Runs the clean inputs and every case through `run` (void(AttnData&,
// std::vector<uint16_t>* out, std::vector<float>* lse), asserting success and an intact
// output guard) and expects compare_unseen to find nothing.
template <class Run>
void expect_unseen_rows_unchanged(AttnData a, int64_t near, Run run) {
  const AttnConfig& c = a.cfg;
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  std::vector<uint16_t> clean_out, out;
  std::vector<float> clean_lse, lse;
  ASSERT_NO_FATAL_FAILURE(run(a, &clean_out, &clean_lse));
  std::mt19937_64 rng(c.seed);
  for (const UnseenCase& k : unseen_cases(c.seqlen, near, rng)) {
    AttnData dirty = with_unseen_garbage(a, k.cut, k.g, rng());
    ASSERT_NO_FATAL_FAILURE(run(dirty, &out, &lse));
    const std::string diff = compare_unseen(a, clean_out.data(), clean_lse.data(), out.data(), lse.data(),
                                            k.cut, k.g == Garbage::V);
    EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ", garbage in " << to_string(k.g)
                              << " from row " << k.cut << ": " << diff;
  }
}

// The same on a backend that runs on the host (cpu, emu): host_run(AttnData&) returns the
// HostRun of one call, which must succeed without writing past the output.
template <class HostRunFn>
void expect_unseen_rows_unchanged_on_host(AttnData a, int64_t near, HostRunFn host_run) {
  expect_unseen_rows_unchanged(std::move(a), near, [&](AttnData& d, auto* out, auto* lse) {
    HostRun run = host_run(d);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    EXPECT_TRUE(run.guard_intact(d.out_count())) << "write past the output";
    *out = std::move(run.out);
    *lse = std::move(run.lse);
  });
}

}  // namespace zyfa::test
