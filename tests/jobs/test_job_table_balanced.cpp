// The kBalancedWork job-table schedule (host/job_table.h, used by the cuda backend), checked: every query tile exactly once, a well-formed layout, and simulated finish times that
// are never worse than the equal-jobs schedule's and, on large shapes, level with the mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "host/job_table.h"

namespace zyfa::test {
namespace {

struct Shape {
  int64_t batch, heads, heads_k, seqlen, grid;
  std::string name() const {
    return "B" + std::to_string(batch) + "_H" + std::to_string(heads) + "_Hk" + std::to_string(heads_k) +
           "_S" + std::to_string(seqlen) + "_G" + std::to_string(grid);
  }
  JobTableParams params() const {
    JobTableParams p;
    p.batch = batch;
    p.heads = heads;
    p.heads_k = heads_k;
    p.seqlen = seqlen;
    p.tile_rows = 128;
    p.grid = grid;
    p.schedule = JobSchedule::kBalancedWork;
    return p;
  }
};

uint64_t tile_cost(uint32_t tile, uint32_t n_tiles) {
  return tile % n_tiles + 1 + static_cast<uint64_t>(kTileOverheadBlocks);
}

// Finish time of every workgroup (sum of its tiles' costs); empty when the layout is broken.
// Adds a failure for every defect found.
std::vector<uint64_t> check_layout(const JobTableParams& p, const JobTable& t) {
  const uint64_t n_tiles = static_cast<uint64_t>((p.seqlen + p.tile_rows - 1) / p.tile_rows);
  const uint64_t total = static_cast<uint64_t>(p.batch * p.heads) * n_tiles;
  EXPECT_GE(t.words.size(), 3u + static_cast<size_t>(p.grid));
  if (t.words.size() < 3u + static_cast<size_t>(p.grid)) return {};
  EXPECT_EQ(t.grid(), static_cast<uint32_t>(p.grid));
  EXPECT_EQ(t.n_tiles(), n_tiles);
  EXPECT_EQ(t.begin(0), 0u);
  EXPECT_EQ(t.words.size(), 3u + p.grid + 2u * t.num_jobs());
  std::vector<int> seen(total, 0);
  std::vector<uint64_t> finish(static_cast<size_t>(p.grid), 0);
  for (uint32_t w = 0; w < t.grid(); ++w) {
    EXPECT_LE(t.begin(w), t.end(w)) << "workgroup " << w;
    for (uint32_t j = t.begin(w); j < t.end(w) && 3u + p.grid + 2u * j + 1 < t.words.size(); ++j) {
      EXPECT_NE(t.tile_a(j), kNoTile) << "job " << j << " has no first tile";
      for (const uint32_t tile : {t.tile_a(j), t.tile_b(j)}) {
        if (tile == kNoTile) continue;
        EXPECT_LT(tile, total) << "job " << j;
        if (tile >= total) continue;
        ++seen[tile];
        finish[w] += tile_cost(tile, static_cast<uint32_t>(n_tiles));
      }
    }
  }
  const auto missing = std::count(seen.begin(), seen.end(), 0);
  const auto repeated = std::count_if(seen.begin(), seen.end(), [](int c) { return c > 1; });
  EXPECT_EQ(missing, 0) << "tiles in no job";
  EXPECT_EQ(repeated, 0) << "tiles in several jobs";
  return finish;
}

class BalancedWork : public ::testing::TestWithParam<Shape> {};

TEST_P(BalancedWork, CoversEveryTileAndLevelsTheWork) {
  const Shape s = GetParam();
  const JobTableParams p = s.params();
  JobTable balanced, shared;
  ASSERT_TRUE(build_job_table(p, &balanced));
  JobTableParams equal_jobs = p;
  equal_jobs.schedule = JobSchedule::kEqualJobs;
  ASSERT_TRUE(build_job_table(equal_jobs, &shared));
  const std::vector<uint64_t> finish = check_layout(p, balanced);
  const std::vector<uint64_t> shared_finish = check_layout(p, shared);
  ASSERT_FALSE(finish.empty());
  ASSERT_FALSE(shared_finish.empty());

  uint64_t work = 0;
  for (const uint64_t f : finish) work += f;
  const double mean = static_cast<double>(work) / static_cast<double>(p.grid);
  const uint64_t makespan = *std::max_element(finish.begin(), finish.end());
  const uint64_t shared_makespan = *std::max_element(shared_finish.begin(), shared_finish.end());
  std::printf("%s: makespan %llu key blocks (equal-jobs schedule %llu, mean %.1f)\n", s.name().c_str(),
              static_cast<unsigned long long>(makespan), static_cast<unsigned long long>(shared_makespan),
              mean);
  EXPECT_LE(makespan, shared_makespan);
  // With several tiles per workgroup the lone trailing tiles level the finish times to within
  // 1% of the mean (the equal-jobs schedule is 3% off on the common shapes at G = 132).
  const uint64_t n_tiles = balanced.n_tiles();
  if (static_cast<uint64_t>(s.batch * s.heads) * n_tiles >= 8u * static_cast<uint64_t>(p.grid)) {
    EXPECT_LE(static_cast<double>(makespan), 1.01 * mean + 3.0) << "finish times not level";
  }

  JobTable again;
  ASSERT_TRUE(build_job_table(p, &again));
  EXPECT_EQ(again.words, balanced.words) << "not deterministic";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BalancedWork,
    ::testing::Values(Shape{1, 32, 32, 32768, 132}, Shape{1, 32, 8, 16384, 132}, Shape{1, 32, 32, 8192, 132},
                      Shape{1, 64, 16, 4096, 132}, Shape{1, 128, 128, 2048, 132}, Shape{2, 4, 2, 777, 132},
                      Shape{3, 5, 5, 1000, 132}, Shape{1, 1, 1, 1, 132}, Shape{1, 3, 1, 130, 7},
                      Shape{2, 6, 3, 33000, 114}, Shape{1, 1, 1, 1 << 20, 132}),
    [](const ::testing::TestParamInfo<Shape>& info) { return info.param.name(); });

TEST(BalancedWork, RefusesWhatEqualJobsRefuses) {
  JobTableParams p = Shape{1, 4, 3, 100, 132}.params();  // heads % heads_k != 0
  JobTable t;
  EXPECT_FALSE(build_job_table(p, &t));
  EXPECT_TRUE(t.words.empty());
  p = Shape{1, 4, 4, 0, 132}.params();
  EXPECT_FALSE(build_job_table(p, &t));
  p = Shape{1, 4, 4, 100, 0}.params();
  EXPECT_FALSE(build_job_table(p, &t));
}

}  // namespace
}  // namespace zyfa::test
