// Job tables: the causal prefill work of one call, split into query tiles, paired
// first-with-last so that every job has equal work, and ordered for a persistent grid.
//
// Device layout (little-endian uint32 words, uploaded as is):
//   words[0]            G, the number of persistent workgroups
//   words[1]            n_tiles, query tiles per (batch, head) = ceil(seqlen / tile_rows)
//   words[2 .. 2+G]     G+1 offsets: jobs of workgroup w are jobs[offsets[w] .. offsets[w+1])
//   words[3+G ..]       jobs, 2 words each: (tile_a, tile_b)
// A tile word is the linear id (batch * heads + head) * n_tiles + tile, or kNoTile.
// Workgroup w runs its jobs in order; on MI355X workgroup w runs on XCD w % num_xcds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zyfa {

inline constexpr uint32_t kNoTile = 0xFFFFFFFFu;

// How the jobs are dealt to the workgroups; both give the same table format.
enum class JobSchedule {
  // Equal-work pairs (first tile with last), floor(jobs / G) or one more per workgroup, in an
  // order that keeps each XCD's streams together (gfx950 BF16; docs/design.md, "Job tables").
  kEqualJobs,
  // Balanced by work rather than by job count: pairs, then the last streams as lone tiles in
  // decreasing size, each item to the workgroup that is free first (list scheduling). On an
  // H200 (G = 132) the common shapes have jobs = 1024 * 2^k, so with equal jobs a few CTAs run
  // one job more and the whole grid waits ~3% of the call for them. Workgroups that run at the
  // same time still work on neighbouring streams, which share K and V in L2. num_xcds unused.
  // Also the gfx950 FP8 kernel's, whose two workgroups per CU it pairs more evenly.
  kBalancedWork,
};

// Cost of one query tile under kBalancedWork, in key blocks of the kernel's loop, plus a
// constant for the parts of a tile that do not overlap the tensor cores (first scores, last
// P v, epilogue).
inline constexpr int64_t kTileOverheadBlocks = 2;

struct JobTableParams {
  int64_t batch = 1;
  int64_t heads = 1;      // query heads
  int64_t heads_k = 1;    // KV heads (heads % heads_k == 0): query heads sharing a KV head stay close
  int64_t seqlen = 1;
  int64_t tile_rows = 256;  // query rows per tile (T)
  int64_t grid = 1;         // persistent workgroups (G), e.g. one per CU
  int64_t num_xcds = 1;     // 8 on MI355X
  JobSchedule schedule = JobSchedule::kEqualJobs;
};

struct JobTable {
  std::vector<uint32_t> words;

  uint32_t grid() const { return words[0]; }
  uint32_t n_tiles() const { return words[1]; }
  uint32_t begin(uint32_t wg) const { return words[2 + wg]; }
  uint32_t end(uint32_t wg) const { return words[3 + wg]; }
  uint32_t num_jobs() const { return end(grid() - 1); }
  uint32_t tile_a(uint32_t job) const { return words[3 + grid() + 2 * job]; }
  uint32_t tile_b(uint32_t job) const { return words[4 + grid() + 2 * job]; }
  size_t bytes() const { return words.size() * sizeof(uint32_t); }
};

// Number of uint32 words of the kEqualJobs table for these parameters, or 0 when no table of
// either schedule can be built: a parameter out of range (non-positive, heads % heads_k != 0), linear tile ids that
// would not fit 32 bits (kNoTile excluded), or a table of 4 GiB or more (so that any byte
// offset into it fits 32 bits, as an AMD buffer resource requires). Allocates nothing.
uint64_t job_table_word_count(const JobTableParams& params);

// Builds the table of params.schedule (see docs/design.md, "Job tables"). Returns false and
// leaves *out empty when job_table_word_count(params) == 0, or when a kBalancedWork table
// (more jobs: lone tiles) would reach 4 GiB. Deterministic: equal params give equal words.
bool build_job_table(const JobTableParams& params, JobTable* out);

}  // namespace zyfa
