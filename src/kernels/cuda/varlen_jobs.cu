// One block builds a varlen job table from device prefix sums: the steps of
// varlen::build_serial (kernels/varlen/varlen_jobs.h), with its two running sums done as block
// scans over chunks of the block's width. The table is the same, word for word.
#include "kernels/cuda/varlen_jobs.h"

namespace zyfa::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;

// Exclusive prefix sum of v over the block, plus `carry`; *chunk_total receives the block's
// sum. Every thread of the block must call it (it synchronizes).
__device__ unsigned long long scan_chunk(unsigned long long v, unsigned long long carry,
                                         unsigned long long* warp_sums, unsigned long long* chunk_total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned long long y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    unsigned long long w = lane < kWarps ? warp_sums[lane] : 0ull;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const unsigned long long y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive sums of the warps
  }
  __syncthreads();
  const unsigned long long before = (warp > 0 ? warp_sums[warp - 1] : 0ull) + x - v;
  *chunk_total = warp_sums[kWarps - 1];
  __syncthreads();  // warp_sums is rewritten by the next chunk
  return carry + before;
}

__global__ void __launch_bounds__(kThreads) varlen_job_table_kernel(const VarlenJobArgs a) {
  __shared__ unsigned long long warp_sums[kWarps];
  const varlen::Shape& s = a.shape;
  uint32_t* job_start = static_cast<uint32_t*>(a.workspace);
  unsigned long long* cost_prefix = reinterpret_cast<unsigned long long*>(
      static_cast<char*>(a.workspace) + ((static_cast<size_t>(s.batch) + 1) * sizeof(uint32_t) + 7) / 8 * 8);
  const uint32_t g = static_cast<uint32_t>(s.grid);

  // Jobs per sequence, as exclusive prefix sums.
  unsigned long long carry = 0, total;
  for (int32_t base = 0; base < s.batch; base += kThreads) {
    const int32_t b = base + static_cast<int32_t>(threadIdx.x);
    const unsigned long long v =
        b < s.batch ? static_cast<unsigned long long>(s.heads) *
                          varlen::pairs_of(varlen::seq_at(a.cu_seqlens_q, a.cu_seqlens_k, b, s), s)
                    : 0ull;
    const unsigned long long ex = scan_chunk(v, carry, warp_sums, &total);
    if (b < s.batch) job_start[b] = static_cast<uint32_t>(ex);
    carry += total;
  }
  if (threadIdx.x == 0) job_start[s.batch] = static_cast<uint32_t>(carry);
  const uint32_t jobs = static_cast<uint32_t>(carry);  // the same in every thread
  __syncthreads();

  // Each job's tiles, and the prefix sums of their work.
  carry = 0;
  for (uint32_t base = 0; base < jobs; base += kThreads) {
    const uint32_t j = base + threadIdx.x;
    unsigned long long v = 0;
    if (j < jobs) {
      const varlen::Job job = varlen::job_at(j, job_start, a.cu_seqlens_q, a.cu_seqlens_k, s);
      a.table[3 + g + 2 * j] = job.tile_a;
      a.table[4 + g + 2 * j] = job.tile_b;
      v = job.cost;
    }
    const unsigned long long ex = scan_chunk(v, carry, warp_sums, &total);
    if (j < jobs) cost_prefix[j] = ex;
    carry += total;
  }
  if (threadIdx.x == 0) cost_prefix[jobs] = carry;
  __syncthreads();

  // Equal-work runs of jobs per CTA.
  for (uint32_t w = threadIdx.x; w < g; w += kThreads)
    a.table[2 + w] = varlen::cta_begin(w, reinterpret_cast<const uint64_t*>(cost_prefix), jobs, s.grid);
  if (threadIdx.x == 0) {
    a.table[0] = g;
    a.table[1] = varlen::n_tiles(s);
    a.table[2 + g] = jobs;
  }
}

}  // namespace

cudaError_t launch_varlen_job_table(const VarlenJobArgs& args, cudaStream_t stream) {
  varlen_job_table_kernel<<<1, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
