// One block builds a varlen job table from device prefix sums: the table of
// varlen::build_serial (kernels/varlen/varlen_jobs.h), word for word, but with the counting
// sort over entries (a sequence's pair for all heads at once) instead of jobs, then each
// entry's jobs placed through varlen::sorted_job. Running sums are block scans over chunks of the
// block's width; the in-order ranking of the entries goes one warp after another per chunk.
#include "kernels/cuda/varlen_jobs.h"

namespace zyfa::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;

struct Sum {
  __device__ static unsigned long long op(unsigned long long a, unsigned long long b) { return a + b; }
};
struct Max {
  __device__ static unsigned long long op(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
};

// Inclusive scan of v over the block with Op (identity 0), combined with `carry`; *chunk_total
// receives the whole chunk's result. Every thread of the block must call it (it synchronizes).
template <class Op>
__device__ unsigned long long scan_chunk(unsigned long long v, unsigned long long carry,
                                         unsigned long long* warp_sums, unsigned long long* chunk_total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned long long y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x = Op::op(x, y);
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    unsigned long long w = lane < kWarps ? warp_sums[lane] : 0ull;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const unsigned long long y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w = Op::op(w, y);
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive results of the warps
  }
  __syncthreads();
  const unsigned long long inclusive = Op::op(Op::op(carry, warp > 0 ? warp_sums[warp - 1] : 0ull), x);
  *chunk_total = warp_sums[kWarps - 1];
  __syncthreads();  // warp_sums is rewritten by the next chunk
  return inclusive;
}

__global__ void __launch_bounds__(kThreads) varlen_job_table_kernel(const VarlenJobArgs a) {
  __shared__ unsigned long long warp_sums[kWarps];
  extern __shared__ uint32_t shared_buckets[];
  const varlen::Shape& s = a.shape;
  uint32_t* const scratch = static_cast<uint32_t*>(a.workspace);
  const varlen::Scratch layout = varlen::scratch_layout(s);
  uint32_t* const entry_start = scratch;
  uint32_t* const entry_bucket = scratch + layout.entry_bucket;
  uint32_t* const entry_seq = scratch + layout.entry_seq;
  uint32_t* const order = scratch + layout.order;
  uint32_t* const run_start = scratch + layout.run_start;
  uint32_t* const run_len = scratch + layout.run_len;
  const uint32_t nb = varlen::cost_buckets(s);
  uint32_t* buckets = nb > kSharedCostBuckets ? scratch + layout.words : shared_buckets;
  const uint32_t g = static_cast<uint32_t>(s.grid), heads = static_cast<uint32_t>(s.heads);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int32_t* const cu_q = a.cu_seqlens_q;
  const int32_t* const cu_k = a.cu_seqlens_k;

  // Entries (pairs) per sequence, as exclusive prefix sums.
  unsigned long long carry = 0, total;
  for (int32_t base = 0; base < s.batch; base += kThreads) {
    const int32_t b = base + static_cast<int32_t>(threadIdx.x);
    const unsigned long long v = b < s.batch ? varlen::pairs_of(varlen::seq_at(cu_q, cu_k, b, s), s) : 0ull;
    const unsigned long long in = scan_chunk<Sum>(v, carry, warp_sums, &total);
    if (b < s.batch) entry_start[b] = static_cast<uint32_t>(in - v);
    carry += total;
  }
  if (threadIdx.x == 0) entry_start[s.batch] = static_cast<uint32_t>(carry);
  const uint32_t entries = static_cast<uint32_t>(carry);  // the same in every thread
  const uint32_t jobs = entries * heads;
  for (uint32_t c = threadIdx.x; c < nb; c += kThreads) buckets[c] = 0;
  __syncthreads();

  // Entries per cost bucket (one atomic per bucket and warp: a sequence's entries mostly
  // share their cost), then each bucket's first sorted position.
  for (uint32_t base = 0; base < entries; base += kThreads) {
    const uint32_t e = base + threadIdx.x;
    uint32_t bucket = 0xFFFFFFFFu;  // lanes past the entries form a group of their own
    if (e < entries) {
      const varlen::Entry en = varlen::entry_at(e, entry_start, cu_q, cu_k, s);
      bucket = varlen::bucket_of(en.cost, s);
      entry_bucket[e] = bucket;
      entry_seq[e] = static_cast<uint32_t>(en.b);
    }
    const uint32_t peers = __match_any_sync(0xFFFFFFFFu, bucket);
    if (e < entries && lane == __ffs(peers) - 1) atomicAdd(&buckets[bucket], __popc(peers));
  }
  __syncthreads();
  carry = 0;
  for (uint32_t base = 0; base < nb; base += kThreads) {
    const uint32_t c = base + threadIdx.x;
    const unsigned long long n = c < nb ? buckets[c] : 0ull;
    const unsigned long long in = scan_chunk<Sum>(n, carry, warp_sums, &total);
    if (c < nb) buckets[c] = static_cast<uint32_t>(in - n);
    carry += total;
  }
  __syncthreads();

  // Each entry to its sorted position, in entry order within every bucket: the lanes of a
  // warp that share a bucket rank among themselves, and the warps of a chunk take turns.
  for (uint32_t base = 0; base < entries; base += kThreads) {
    const uint32_t e = base + threadIdx.x;
    const uint32_t bucket = e < entries ? entry_bucket[e] : 0xFFFFFFFFu;
    const uint32_t peers = __match_any_sync(0xFFFFFFFFu, bucket);
    const uint32_t rank = __popc(peers & ((1u << lane) - 1u));
    for (int turn = 0; turn < kWarps; ++turn) {
      if (warp == turn && e < entries) {
        const uint32_t k = buckets[bucket] + rank;
        __syncwarp(peers);
        if (rank == 0) buckets[bucket] = k + __popc(peers);
        order[k] = e;
      }
      __syncthreads();
    }
  }

  // The runs of equal (cost, sequence) in sorted order: each position's run start by a max
  // scan of the positions where a run begins; a run's last position writes its length.
  carry = 0;
  for (uint32_t base = 0; base < entries; base += kThreads) {
    const uint32_t k = base + threadIdx.x;
    unsigned long long begins = 0;
    bool ends = false;
    if (k < entries) {
      // Runs are told apart by cost bucket and sequence.
      const auto key = [&](uint32_t at) {
        const uint32_t e = order[at];
        return (static_cast<unsigned long long>(entry_bucket[e]) << 32) | entry_seq[e];
      };
      const unsigned long long here = key(k);
      begins = k == 0 || key(k - 1) != here ? k : 0;
      ends = k + 1 == entries || key(k + 1) != here;
    }
    const unsigned long long rs = scan_chunk<Max>(begins, carry, warp_sums, &total);
    if (k < entries) {
      run_start[k] = static_cast<uint32_t>(rs);
      if (ends) run_len[rs] = k + 1 - static_cast<uint32_t>(rs);
    }
    carry = total > carry ? total : carry;
  }
  __syncthreads();

  // Every job to its slot: the heads of the entry at sorted position k, from one thread, so
  // that the reads that find the entry's sequence (a chain of dependent loads) happen once
  // per entry rather than once per job.
  for (uint32_t k = threadIdx.x; k < entries; k += kThreads) {
    const uint32_t e = order[k], rs = run_start[k], len = run_len[rs];
    const int32_t b = static_cast<int32_t>(entry_seq[e]);
    const varlen::Seq q = varlen::seq_at(cu_q, cu_k, b, s);
    const uint32_t p = e - entry_start[b];
    for (uint32_t h = 0; h < heads; ++h) {
      const varlen::Job job = varlen::pair_job(q, b, h, p, s);
      const uint32_t slot = varlen::slot_of(varlen::sorted_job(k, rs, len, h, s), jobs, s.grid);
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
