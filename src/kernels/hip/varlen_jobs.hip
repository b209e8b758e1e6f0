// The varlen job table on gfx950, built on the device from cu_seqlens by one workgroup: the
// steps of varlen::build_serial (kernels/varlen/varlen_jobs.h), with its running sums as
// workgroup scans over chunks of kVarlenJobThreads values and its in-order counting-sort pass
// one wave after another per chunk. The table is the same, word for word, and the host never
// reads a length.
#include <hip/hip_runtime.h>

#include "varlen_jobs_args.h"

namespace {

using zyfa::kernels::kVarlenJobBuckets;
using zyfa::kernels::kVarlenJobThreads;
using zyfa::kernels::VarlenJobTableArgs;
namespace varlen = zyfa::varlen;

constexpr int kWaves = kVarlenJobThreads / 64;

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

// The lanes of this wave whose v equals this lane's (every lane active): one ballot per
// distinct value, a few per wave since a sequence's jobs mostly share their cost.
__device__ uint64_t match_any(uint32_t v) {
  uint64_t left = __builtin_amdgcn_ballot_w64(true), peers = 0;
  while (left != 0) {
    const uint32_t value = __builtin_amdgcn_readlane(v, static_cast<int>(__builtin_ctzll(left)));
    const uint64_t same = __builtin_amdgcn_ballot_w64(v == value);
    if (v == value) peers = same;
    left &= ~same;
  }
  return peers;
}

// This thread's global stores complete, then the workgroup barrier, so that the other waves
// read what it wrote: the compiler's workgroup-scope fence waits for LDS operations only.
__device__ void barrier_after_stores() {
  asm volatile("s_waitcnt vmcnt(0)" ::: "memory");
  __syncthreads();
}

// A job's cost bucket, opaque: the compiler otherwise splits max_job_cost - cost into a
// negative register part and the constant it folds into the LDS instruction's offset, an
// address that only wraps back into the buckets modulo 2^32 (the emulator faults on it).
__device__ uint32_t bucket_index(uint32_t cost, const varlen::Shape& s) {
  uint32_t b = varlen::bucket_of(cost, s);
  asm volatile("" : "+v"(b));
  return b;
}

}  // namespace

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer.
extern "C" __global__ __launch_bounds__(kVarlenJobThreads) void varlen_job_table(VarlenJobTableArgs) {
  __shared__ uint64_t sums[kVarlenJobThreads];
  __shared__ uint32_t buckets[kVarlenJobBuckets];
  const auto& a = *(KernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
  const varlen::Shape s = a.shape;
  // Global pointers (generic ones would compile to flat accesses).
  const gptr<const int32_t> gq = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_q);
  const gptr<const int32_t> gk = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_k);
  const gptr<uint32_t> table = reinterpret_cast<gptr<uint32_t>>(a.table);
  const gptr<uint32_t> job_start = reinterpret_cast<gptr<uint32_t>>(a.scratch);
  const auto cu_q = (const int32_t*)gq;
  const auto cu_k = (const int32_t*)gk;
  const uint32_t tid = threadIdx.x, lane = tid % 64, wave = tid / 64;
  const uint32_t g = static_cast<uint32_t>(s.grid), nb = varlen::cost_buckets(s);

  // Jobs per sequence, as exclusive prefix sums.
  uint64_t carry = 0, total = 0;
  for (int32_t base = 0; base < s.batch; base += kVarlenJobThreads) {
    const int32_t b = base + static_cast<int32_t>(tid);
    const uint64_t v =
        b < s.batch ? static_cast<uint64_t>(s.heads) * varlen::pairs_of(varlen::seq_at(cu_q, cu_k, b, s), s) : 0;
    const uint64_t ex = exclusive_scan(v, sums, &total);
    if (b < s.batch) job_start[b] = static_cast<uint32_t>(carry + ex);
    carry += total;
  }
  if (tid == 0) job_start[s.batch] = static_cast<uint32_t>(carry);
  const uint32_t jobs = static_cast<uint32_t>(carry);  // the same in every thread
  for (uint32_t c = tid; c < nb; c += kVarlenJobThreads) buckets[c] = 0;
  barrier_after_stores();  // job_start is read by every thread from here on

  // Jobs per cost bucket, then each bucket's first sorted position.
  const auto starts = (const uint32_t*)job_start;
  for (uint32_t j = tid; j < jobs; j += kVarlenJobThreads)
    atomicAdd(&buckets[bucket_index(varlen::job_at(j, starts, cu_q, cu_k, s).cost, s)], 1u);
  __syncthreads();
  carry = 0;
  for (uint32_t base = 0; base < nb; base += kVarlenJobThreads) {
    const uint32_t c = base + tid;
    const uint64_t n = c < nb ? buckets[c] : 0;
    const uint64_t ex = exclusive_scan(n, sums, &total);
    if (c < nb) buckets[c] = static_cast<uint32_t>(carry + ex);
    carry += total;
  }
  __syncthreads();

  // Each job to its sorted position, in job order within every bucket: the lanes of a wave
  // that share a bucket rank among themselves, and the waves of a chunk take their turns.
  for (uint32_t base = 0; base < jobs; base += kVarlenJobThreads) {
    const uint32_t j = base + tid;
    varlen::Job job{varlen::kNoTile, varlen::kNoTile, 0};
    uint32_t bucket = 0xFFFFFFFFu;  // lanes past the jobs form a group of their own
    if (j < jobs) {
      job = varlen::job_at(j, starts, cu_q, cu_k, s);
      bucket = bucket_index(job.cost, s);
    }
    const uint64_t peers = match_any(bucket);
    const uint32_t rank = static_cast<uint32_t>(__builtin_popcountll(peers & ((uint64_t{1} << lane) - 1)));
    uint32_t k = 0;
    for (uint32_t turn = 0; turn < kWaves; ++turn) {
      // One wave's lanes read their bucket before its first lane writes it back (one
      // instruction stream).
      if (wave == turn && j < jobs) {
        k = buckets[bucket] + rank;
        if (rank == 0) buckets[bucket] = k + static_cast<uint32_t>(__builtin_popcountll(peers));
      }
      __syncthreads();
    }
    if (j < jobs) {
      const uint32_t slot = varlen::slot_of(k, jobs, s.grid);
      table[3 + g + 2 * slot] = job.tile_a;
      table[4 + g + 2 * slot] = job.tile_b;
    }
  }
  if (tid <= g) varlen::write_header((uint32_t*)table, tid, kVarlenJobThreads, jobs, s);
}
