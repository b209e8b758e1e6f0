// Time to build a job table from scratch (allocation included), as a handle does for every
// shape it has not seen. Shapes: the MI355X reference case (128 heads x 128K tokens, one
// workgroup per CU, 8 XCDs), a short prompt, and the largest realistic table (1M tokens with
// 64-row tiles, a million jobs).
#include <benchmark/benchmark.h>

#include "host/job_table.h"

namespace {

void build(benchmark::State& state, int64_t batch, int64_t heads, int64_t heads_k, int64_t seqlen,
           int64_t tile_rows, int64_t grid, int64_t num_xcds) {
  const zyfa::JobTableParams p{batch, heads, heads_k, seqlen, tile_rows, grid, num_xcds};
  uint64_t jobs = 0, bytes = 0;
  for (auto _ : state) {
    zyfa::JobTable table;
    if (!zyfa::build_job_table(p, &table)) {
      state.SkipWithError("build_job_table refused the shape");
      return;
    }
    jobs = table.num_jobs();
    bytes = table.bytes();
    benchmark::DoNotOptimize(table.words.data());
    benchmark::ClobberMemory();
  }
  state.counters["jobs"] = static_cast<double>(jobs);
  state.counters["table_bytes"] = static_cast<double>(bytes);
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK_CAPTURE(build, H128_S128K_T256_G256_X8, 1, 128, 16, 131072, 256, 256, 8)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(build, H32_S4K_T256_G256_X8, 1, 32, 8, 4096, 256, 256, 8)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(build, H128_S1M_T64_G256_X8, 1, 128, 16, 1 << 20, 64, 256, 8)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(build, H128_S128K_T128_G132_X1, 1, 128, 16, 131072, 128, 132, 1)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
