// Job tables for the shapes the kernels meet: every sequence-length class (one tile, exact
// multiples, one row over, odd and even tile counts, a million tokens), three tile heights,
// MHA through MQA, and grids of one workgroup, of a CUDA device and of an MI355X.
#include <gtest/gtest.h>

#include <iostream>

#include "host/job_table.h"
#include "job_table_checks.h"

namespace zyfa::test {
namespace {

struct Setup {
  int64_t batch, heads, heads_k, grid, num_xcds;
};

// MI355X: 256 CUs on 8 XCDs. 300 workgroups leave the XCDs with unequal counts; 132 is an
// H200's SM count (no XCDs); batch 3 x 5 heads gives an odd stream count (the half job);
// 4 workgroups on 6 chiplets leave chiplets empty and put the half job where the balance is
// tightest.
constexpr Setup kSetups[] = {
    {1, 128, 128, 256, 8}, {1, 128, 32, 256, 8}, {1, 128, 16, 256, 8}, {1, 128, 1, 256, 8},
    {3, 5, 5, 300, 8},     {2, 8, 2, 132, 1},    {1, 7, 7, 1, 1},      {1, 9, 3, 4, 6},
};
constexpr int64_t kSeqlens[] = {1, 2, 255, 256, 257, 1000, 4099, int64_t{1} << 20};
constexpr int64_t kTileRows[] = {256, 128, 64};

std::vector<JobTableParams> all_shapes() {
  std::vector<JobTableParams> shapes;
  for (const Setup& s : kSetups) {
    for (int64_t seqlen : kSeqlens) {
      for (int64_t tile_rows : kTileRows) {
        JobTableParams p;
        p.batch = s.batch;
        p.heads = s.heads;
        p.heads_k = s.heads_k;
        p.seqlen = seqlen;
        p.tile_rows = tile_rows;
        p.grid = s.grid;
        p.num_xcds = s.num_xcds;
        shapes.push_back(p);
      }
    }
  }
  return shapes;
}

class Shape : public ::testing::TestWithParam<JobTableParams> {};

TEST_P(Shape, CoversEveryTileOnceBalancedAndLocal) {
  const JobTableParams& p = GetParam();
  JobTable table;
  ASSERT_TRUE(build_job_table(p, &table)) << job_table_name(p);
  const JobTableReport report = check_job_table(p, table);
  EXPECT_TRUE(report.ok()) << report.summary();
  std::cout << job_table_name(p) << ": " << report.summary() << "\n";
}

TEST_P(Shape, IsDeterministic) {
  const JobTableParams& p = GetParam();
  JobTable first, second;
  // The second table starts out holding another shape's table: nothing of it may survive.
  JobTableParams other = p;
  other.seqlen = p.seqlen + 3 * p.tile_rows;
  ASSERT_TRUE(build_job_table(other, &second));
  ASSERT_TRUE(build_job_table(p, &first));
  ASSERT_TRUE(build_job_table(p, &second));
  EXPECT_EQ(first.words, second.words);
}

INSTANTIATE_TEST_SUITE_P(JobTable, Shape, ::testing::ValuesIn(all_shapes()),
                         [](const ::testing::TestParamInfo<JobTableParams>& info) {
                           return job_table_name(info.param);
                         });

}  // namespace
}  // namespace zyfa::test
