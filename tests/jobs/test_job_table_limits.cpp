// Parameters a job table cannot be built for, the 32-bit limits of the device format, and a
// seeded sweep over random shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <random>

#include "host/job_table.h"
#include "job_table_checks.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

JobTableParams mi355x_shape() {
  JobTableParams p;
  p.batch = 1;
  p.heads = 128;
  p.heads_k = 16;
  p.seqlen = 131072;
  p.tile_rows = 256;
  p.grid = 256;
  p.num_xcds = 8;
  return p;
}

// A refused build returns false, reports no size and leaves the output empty, even when the
// output held an earlier table.
void expect_refused(const JobTableParams& p) {
  EXPECT_EQ(job_table_word_count(p), 0u) << job_table_name(p);
  JobTable table;
  ASSERT_TRUE(build_job_table(mi355x_shape(), &table));
  EXPECT_FALSE(build_job_table(p, &table)) << job_table_name(p);
  EXPECT_TRUE(table.words.empty()) << job_table_name(p);
}

TEST(JobTableLimits, RefusesNonPositiveFields) {
  for (int64_t bad : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    for (int field = 0; field < 7; ++field) {
      JobTableParams p = mi355x_shape();
      int64_t* fields[] = {&p.batch, &p.heads,     &p.heads_k,  &p.seqlen,
                           &p.tile_rows, &p.grid, &p.num_xcds};
      *fields[field] = bad;
      SCOPED_TRACE(testing::Message() << "field " << field << " = " << bad);
      expect_refused(p);
    }
  }
}

TEST(JobTableLimits, RefusesHeadsNotMultipleOfKvHeads) {
  JobTableParams p = mi355x_shape();
  p.heads = 12;
  p.heads_k = 8;
  expect_refused(p);
}

TEST(JobTableLimits, RefusesTileIdsBeyond32Bits) {
  // 4096 x 128 streams of 16384 tiles: 2^33 tile ids.
  JobTableParams p = mi355x_shape();
  p.batch = 4096;
  p.heads_k = 128;
  p.seqlen = int64_t{1} << 20;
  p.tile_rows = 64;
  expect_refused(p);
  // Exactly 2^32 ids: the largest would be 2^32 - 1, which is kNoTile.
  p.batch = 1 << 16;
  p.heads = 1 << 16;
  p.heads_k = 1;
  p.seqlen = 1;
  p.tile_rows = 1;
  expect_refused(p);
}

TEST(JobTableLimits, RefusesProductsBeyond64Bits) {
  JobTableParams p = mi355x_shape();
  p.batch = int64_t{1} << 62;
  p.heads = 4;
  p.heads_k = 4;
  expect_refused(p);
  p.batch = std::numeric_limits<int64_t>::max();
  p.heads = std::numeric_limits<int64_t>::max();
  p.heads_k = 1;
  p.seqlen = std::numeric_limits<int64_t>::max();
  expect_refused(p);
}

TEST(JobTableLimits, TableBytesStayBelow4GiB) {
  // One stream of S one-row tiles on one workgroup: 3 + 1 + 2 * S/2 words for even S.
  // 4 GiB - 1 bytes hold 1073741823 words.
  JobTableParams p;
  p.tile_rows = 1;
  p.grid = 1;
  p.seqlen = 1073741818;
  EXPECT_EQ(job_table_word_count(p), 1073741822u);
  p.seqlen = 1073741820;  // 1073741824 words
  EXPECT_EQ(job_table_word_count(p), 0u);
  p.seqlen = 1;
  p.grid = std::numeric_limits<uint32_t>::max();
  expect_refused(p);
}

TEST(JobTableLimits, MoreWorkgroupsThanJobsLeavesSomeIdle) {
  JobTableParams p = mi355x_shape();
  p.heads = 3;
  p.heads_k = 1;
  p.seqlen = 300;  // 2 tiles per stream: 3 jobs for 256 workgroups
  JobTable table;
  ASSERT_TRUE(build_job_table(p, &table));
  const JobTableReport report = check_job_table(p, table);
  EXPECT_TRUE(report.ok()) << report.summary();
  EXPECT_EQ(table.num_jobs(), 3u);
  EXPECT_EQ(report.min_wg_work, 0u);
}

TEST(JobTableLimits, HugeChipletCountGivesEachWorkgroupItsOwnChiplet) {
  JobTableParams p = mi355x_shape();
  p.seqlen = 5000;  // 20 tiles per stream
  p.grid = 7;
  p.num_xcds = std::numeric_limits<int64_t>::max();
  JobTable table;
  ASSERT_TRUE(build_job_table(p, &table));
  const JobTableReport report = check_job_table(p, table);
  EXPECT_TRUE(report.ok()) << report.summary();
}

// Random shapes, fresh each run; the run seed (printed) in ZYFA_TEST_SEED repeats a run.
TEST(JobTableSweep, RandomShapes) {
  const uint64_t seed = seed_for("JobTableSweep.RandomShapes");
  std::cout << "JobTableSweep.RandomShapes seed " << seed << "\n";
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int iter = 0; iter < 300; ++iter) {
    JobTableParams p;
    p.batch = pick(1, 4);
    p.heads_k = pick(1, 16);
    p.heads = p.heads_k * pick(1, 8);
    p.tile_rows = int64_t{32} << pick(0, 3);
    p.seqlen = pick(0, 1) ? pick(1, 4 * p.tile_rows) : pick(1, 200000);
    p.num_xcds = pick(1, 8);
    p.grid = pick(1, 400);
    JobTable table;
    ASSERT_TRUE(build_job_table(p, &table)) << job_table_name(p);
    const JobTableReport report = check_job_table(p, table);
    ASSERT_TRUE(report.ok()) << "seed " << seed << " " << job_table_name(p) << "\n"
                             << report.summary();
  }
}

}  // namespace
}  // namespace zyfa::test
