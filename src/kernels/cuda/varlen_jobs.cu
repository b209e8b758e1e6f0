// One block builds a varlen job table from device prefix sums: the steps of
// varlen::build_serial (kernels/varlen/varlen_jobs.h), with its running sums as block scans
// over chunks of the block's width and its in-order counting-sort pass one warp after another
// per chunk. The table is the same, word for word.
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
  extern __shared__ uint32_t shared_buckets[];
  const varlen::Shape& s = a.shape;
  uint32_t* job_start = static_cast<uint32_t*>(a.workspace);
  const uint32_t nb = varlen::cost_buckets(s);
  uint32_t* buckets = nb > kSharedCostBuckets ? job_start + s.batch + 1 : shared_buckets;
  const uint32_t g = static_cast<uint32_t>(s.grid);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

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
  for (uint32_t c = threadIdx.x; c < nb; c += kThreads) buckets[c] = 0;
  __syncthreads();

  // Jobs per cost bucket, then each bucket's first sorted position.
  for (uint32_t j = threadIdx.x; j < jobs; j += kThreads)
    atomicAdd(&buckets[varlen::bucket_of(varlen::job_at(j, job_start, a.cu_seqlens_q, a.cu_seqlens_k, s).cost, s)],
              1u);
  __syncthreads();
  carry = 0;
  for (uint32_t base = 0; base < nb; base += kThreads) {
    const uint32_t c = base + threadIdx.x;
    const unsigned long long n = c < nb ? buckets[c] : 0ull;
    const unsigned long long ex = scan_chunk(n, carry, warp_sums, &total);
    if (c < nb) buckets[c] = static_cast<uint32_t>(ex);
    carry += total;
  }
  __syncthreads();

  // Each job to its sorted position, in job order within every bucket: the lanes of a warp
  // that share a bucket rank among themselves, and the warps of a chunk take their turns.
  for (uint32_t base = 0; base < jobs; base += kThreads) {
    const uint32_t j = base + threadIdx.x;
    varlen::Job job{varlen::kNoTile, varlen::kNoTile, 0};
    uint32_t bucket = 0xFFFFFFFFu;  // lanes past the jobs form a group of their own
    if (j < jobs) {
      job = varlen::job_at(j, job_start, a.cu_seqlens_q, a.cu_seqlens_k, s);
      bucket = varlen::bucket_of(job.cost, s);
    }
    const uint32_t peers = __match_any_sync(0xFFFFFFFFu, bucket);
    const uint32_t rank = __popc(peers & ((1u << lane) - 1u));
    uint32_t k = 0;
    for (int turn = 0; turn < kWarps; ++turn) {
      if (warp == turn && j < jobs) {
        k = buckets[bucket] + rank;
        __syncwarp(peers);
        if (rank == 0) buckets[bucket] = k + __popc(peers);
      }
      __syncthreads();
    }
    if (j < jobs) {
      const uint32_t slot = varlen::slot_of(k, jobs, s.grid);
      a.table[3 + g + 2 * slot] = job.tile_a;
      a.table[4 + g + 2 * slot] = job.tile_b;
    }
  }
  if (threadIdx.x <= g) varlen::write_header(a.table, threadIdx.x, kThreads, jobs, s);
}

}  // namespace

cudaError_t launch_varlen_job_table(const VarlenJobArgs& args, cudaStream_t stream) {
  const uint32_t buckets = varlen::cost_buckets(args.shape);
  const size_t shared = buckets > kSharedCostBuckets ? 0 : buckets * sizeof(uint32_t);
  varlen_job_table_kernel<<<1, kThreads, shared, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
