// Job tables for the Hopper persistent grid, balanced by work rather than by job count.
//
// The shared builder (host/job_table.h) gives every workgroup floor(jobs / G) or one more
// equal-work jobs. On an H200 (G = 132) the common shapes have jobs = 1024 * 2^k, so a few
// CTAs run one job more than the rest and the whole grid waits ~3% of the call for them. This
// builder emits the same table format (pairs (tile_a, tile_b), kNoTile for a lone tile) but
// hands out work as a list scheduler would: items in the shared global order (each stream's
// first-with-last pairs), each given to the CTA whose simulated finish time is earliest, and
// the last streams split into lone tiles in decreasing size so that the finish times level
// out to within a few key blocks. Since every CTA takes the earliest-free slot, CTAs that run
// at the same time still work on neighbouring streams, which share K and V in L2.
#pragma once

#include <cstdint>

#include "host/job_table.h"

namespace zyfa::cuda {

// Cost of one query tile in key blocks of the kernel's loop, plus a constant for the parts of
// a tile that do not overlap the tensor cores (first scores, last P v, epilogue).
inline constexpr int64_t kTileOverheadBlocks = 2;

// Same parameters (tile_rows = the kernel's query and key block, num_xcds ignored) and the
// same failure cases as zyfa::build_job_table. Deterministic.
bool build_balanced_job_table(const JobTableParams& params, JobTable* out);

}  // namespace zyfa::cuda
