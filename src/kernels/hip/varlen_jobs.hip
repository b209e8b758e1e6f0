// The varlen job table on gfx950, built on the device from cu_seqlens by one workgroup: the
// steps of varlen::build_serial (kernels/varlen/varlen_jobs.h) with its two running sums as
// workgroup scans over chunks of kVarlenJobThreads values, so the table is the same, word for
// word, and the host never reads a length.
#include <hip/hip_runtime.h>

#include "varlen_jobs_args.h"

namespace {

using zyfa::kernels::kVarlenJobThreads;
using zyfa::kernels::VarlenJobTableArgs;
namespace varlen = zyfa::varlen;

using KernargPtr = __attribute__((address_space(4))) const VarlenJobTableArgs*;
template <typename T>
using gptr = __attribute__((address_space(1))) T*;

// Exclusive prefix sum of v over the workgroup (a Hillis-Steele scan in LDS); *total gets the
// sum of all. Every thread calls it (it synchronizes).
__device__ uint64_t exclusive_scan(uint64_t v, uint64_t* sums, uint64_t* total) {
  const int t = static_cast<int>(threadIdx.x);
  sums[t] = v;
  __syncthreads();
  for (int off = 1; off < kVarlenJobThreads; off <<= 1) {
    const uint64_t add = t >= off ? sums[t - off] : 0;
    __syncthreads();
    sums[t] += add;
    __syncthreads();
  }
  const uint64_t inclusive = sums[t];
  *total = sums[kVarlenJobThreads - 1];
  __syncthreads();  // sums is rewritten by the next chunk
  return inclusive - v;
}

}  // namespace

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer.
extern "C" __global__ __launch_bounds__(kVarlenJobThreads) void varlen_job_table(VarlenJobTableArgs) {
  __shared__ uint64_t sums[kVarlenJobThreads];
  const auto& a = *(KernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
  const varlen::Shape s = a.shape;
  // Global pointers (generic ones would compile to flat accesses).
  const gptr<const int32_t> cu_q = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_q);
  const gptr<const int32_t> cu_k = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_k);
  const gptr<uint32_t> table = reinterpret_cast<gptr<uint32_t>>(a.table);
  const gptr<uint32_t> job_start = reinterpret_cast<gptr<uint32_t>>(a.scratch);
  const gptr<uint64_t> cost_prefix = reinterpret_cast<gptr<uint64_t>>(a.scratch + varlen::scratch_cost_offset(s));
  const uint32_t tid = threadIdx.x, g = static_cast<uint32_t>(s.grid);

  // Jobs per sequence, as exclusive prefix sums.
  uint64_t carry = 0, total = 0;
  for (int32_t base = 0; base < s.batch; base += kVarlenJobThreads) {
    const int32_t b = base + static_cast<int32_t>(tid);
    const uint64_t v = b < s.batch ? static_cast<uint64_t>(s.heads) *
                                         varlen::pairs_of(varlen::seq_at((const int32_t*)cu_q, (const int32_t*)cu_k, b, s), s)
                                   : 0;
    const uint64_t ex = exclusive_scan(v, sums, &total);
    if (b < s.batch) job_start[b] = static_cast<uint32_t>(carry + ex);
    carry += total;
  }
  if (tid == 0) job_start[s.batch] = static_cast<uint32_t>(carry);
  const uint32_t jobs = static_cast<uint32_t>(carry);  // the same in every thread
  __syncthreads();

  // Each job's tiles, and the prefix sums of their work.
  carry = 0;
  for (uint32_t base = 0; base < jobs; base += kVarlenJobThreads) {
    const uint32_t j = base + tid;
    uint64_t v = 0;
    if (j < jobs) {
      const varlen::Job job =
          varlen::job_at(j, (const uint32_t*)job_start, (const int32_t*)cu_q, (const int32_t*)cu_k, s);
      table[3 + g + 2 * j] = job.tile_a;
      table[4 + g + 2 * j] = job.tile_b;
      v = job.cost;
    }
    const uint64_t ex = exclusive_scan(v, sums, &total);
    if (j < jobs) cost_prefix[j] = carry + ex;
    carry += total;
  }
  if (tid == 0) cost_prefix[jobs] = carry;
  __syncthreads();

  // Equal-work runs of jobs per workgroup of the attention kernel.
  for (uint32_t w = tid; w < g; w += kVarlenJobThreads)
    table[2 + w] = varlen::cta_begin(w, (const uint64_t*)cost_prefix, jobs, s.grid);
  if (tid == 0) {
    table[0] = g;
    table[1] = varlen::n_tiles(s);
    table[2 + g] = jobs;
  }
}
