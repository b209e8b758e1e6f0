// The device builder of varlen job tables (kernels/varlen/varlen_jobs.h): one block reads
// cu_seqlens and writes the table, so the host never reads a length and a captured graph
// replays correctly with new lengths under the same maxima.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/varlen/varlen_jobs.h"

namespace zyfa::cuda {

struct VarlenJobArgs {
  const int32_t* cu_seqlens_q;  // batch + 1 each, device memory
  const int32_t* cu_seqlens_k;
  void* workspace;              // varlen_job_workspace_bytes(shape) bytes
  uint32_t* table;              // varlen::table_words(shape) words, in the job-table format
  varlen::Shape shape;
};

// Cost buckets of the counting sort that fit in the builder's shared memory; more go to the
// workspace (same table, slower sort).
inline constexpr uint32_t kSharedCostBuckets = 10240;  // 40 KiB: under the 48 KiB without opt-in

// Scratch of the builder: varlen::scratch_layout's words, then the cost buckets when they do
// not fit in shared memory.
inline size_t varlen_job_workspace_bytes(const varlen::Shape& s) {
  const uint32_t buckets = varlen::cost_buckets(s);
  return (varlen::scratch_layout(s).words + (buckets > kSharedCostBuckets ? buckets : 0)) * sizeof(uint32_t);
}

cudaError_t launch_varlen_job_table(const VarlenJobArgs& args, cudaStream_t stream);

}  // namespace zyfa::cuda
