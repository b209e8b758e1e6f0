// The varlen job table on gfx950, built on the device from cu_seqlens by one workgroup: the
// table of varlen::build_serial (kernels/varlen/varlen_jobs.h), word for word, but with the
// counting sort over entries (a sequence's pair for all heads at once) instead of jobs, then
// each entry's jobs placed through varlen::sorted_job. Running sums are workgroup scans over
// chunks of kVarlenJobThreads values; the in-order ranking of the entries goes one wave after
// another per chunk. The host never reads a length.
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

struct Sum {
  __device__ static uint64_t op(uint64_t a, uint64_t b) { return a + b; }
};
struct Max {
  __device__ static uint64_t op(uint64_t a, uint64_t b) { return a > b ? a : b; }
};

// Inclusive scan of v over the workgroup with Op (identity 0; a Hillis-Steele scan in LDS),
// combined with `carry`; *total gets the result over the whole chunk. Every thread calls it
// (it synchronizes).
template <class Op>
__device__ uint64_t scan_chunk(uint64_t v, uint64_t carry, uint64_t* sums, uint64_t* total) {
  const int t = static_cast<int>(threadIdx.x);
  sums[t] = v;
  __syncthreads();
  for (int off = 1; off < kVarlenJobThreads; off <<= 1) {
    const uint64_t add = t >= off ? sums[t - off] : 0;
    __syncthreads();
    sums[t] = Op::op(sums[t], add);
    __syncthreads();
  }
  const uint64_t inclusive = sums[t];
  *total = sums[kVarlenJobThreads - 1];
  __syncthreads();  // sums is rewritten by the next chunk
  return Op::op(carry, inclusive);
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
  const varlen::Scratch layout = varlen::scratch_layout(s);
  // Global pointers (generic ones would compile to flat accesses).
  const gptr<const int32_t> gq = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_q);
  const gptr<const int32_t> gk = reinterpret_cast<gptr<const int32_t>>(a.cu_seqlens_k);
  const gptr<uint32_t> table = reinterpret_cast<gptr<uint32_t>>(a.table);
  const gptr<uint32_t> scratch = reinterpret_cast<gptr<uint32_t>>(a.scratch);
  const gptr<uint32_t> entry_start = scratch;
  const gptr<uint32_t> entry_bucket = scratch + layout.entry_bucket;
  const gptr<uint32_t> entry_seq = scratch + layout.entry_seq;
  const gptr<uint32_t> order = scratch + layout.order;
  const gptr<uint32_t> run_start = scratch + layout.run_start;
  const gptr<uint32_t> run_len = scratch + layout.run_len;
  const auto cu_q = (const int32_t*)gq;
  const auto cu_k = (const int32_t*)gk;
  const auto starts = (const uint32_t*)entry_start;
  const uint32_t tid = threadIdx.x, lane = tid % 64, wave = tid / 64;
  const uint32_t g = static_cast<uint32_t>(s.grid), nb = varlen::cost_buckets(s);
  const uint32_t heads = static_cast<uint32_t>(s.heads);

  // Entries (pairs) per sequence, as exclusive prefix sums.
  uint64_t carry = 0, total = 0;
  for (int32_t base = 0; base < s.batch; base += kVarlenJobThreads) {
    const int32_t b = base + static_cast<int32_t>(tid);
    const uint64_t v = b < s.batch ? varlen::pairs_of(varlen::seq_at(cu_q, cu_k, b, s), s) : 0;
    const uint64_t in = scan_chunk<Sum>(v, carry, sums, &total);
    if (b < s.batch) entry_start[b] = static_cast<uint32_t>(in - v);
    carry += total;
  }
  if (tid == 0) entry_start[s.batch] = static_cast<uint32_t>(carry);
  const uint32_t entries = static_cast<uint32_t>(carry);  // the same in every thread
  const uint32_t jobs = entries * heads;
  for (uint32_t c = tid; c < nb; c += kVarlenJobThreads) buckets[c] = 0;
  barrier_after_stores();  // entry_start is read by every thread from here on

  // Entries per cost bucket (one atomic per bucket and wave: a sequence's entries mostly
  // share their cost), then each bucket's first sorted position.
  for (uint32_t base = 0; base < entries; base += kVarlenJobThreads) {
    const uint32_t e = base + tid;
    uint32_t bucket = 0xFFFFFFFFu;  // lanes past the entries form a group of their own
    if (e < entries) {
      const varlen::Entry en = varlen::entry_at(e, starts, cu_q, cu_k, s);
      bucket = bucket_index(en.cost, s);
      entry_bucket[e] = bucket;
      entry_seq[e] = static_cast<uint32_t>(en.b);
    }
    const uint64_t peers = match_any(bucket);
    if (e < entries && lane == static_cast<uint32_t>(__builtin_ctzll(peers)))
      atomicAdd(&buckets[bucket], static_cast<uint32_t>(__builtin_popcountll(peers)));
  }
  barrier_after_stores();  // entry_bucket and entry_seq are read by every thread from here on
  carry = 0;
  for (uint32_t base = 0; base < nb; base += kVarlenJobThreads) {
    const uint32_t c = base + tid;
    const uint64_t n = c < nb ? buckets[c] : 0;
    const uint64_t in = scan_chunk<Sum>(n, carry, sums, &total);
    if (c < nb) buckets[c] = static_cast<uint32_t>(in - n);
    carry += total;
  }
  __syncthreads();

  // Each entry to its sorted position, in entry order within every bucket: the lanes of a
  // wave that share a bucket rank among themselves, and the waves of a chunk take turns.
  for (uint32_t base = 0; base < entries; base += kVarlenJobThreads) {
    const uint32_t e = base + tid;
    // Lanes past the entries form a group of their own. (The bucket goes through
    // bucket_index's opaque copy again: it is an LDS address below.)
    uint32_t bucket = 0xFFFFFFFFu;
    if (e < entries) {
      bucket = ((const uint32_t*)entry_bucket)[e];
      asm volatile("" : "+v"(bucket));
    }
    const uint64_t peers = match_any(bucket);
    const uint32_t rank = static_cast<uint32_t>(__builtin_popcountll(peers & ((uint64_t{1} << lane) - 1)));
    for (uint32_t turn = 0; turn < kWaves; ++turn) {
      // One wave's lanes read their bucket before its first lane writes it back (one
      // instruction stream).
      if (wave == turn && e < entries) {
        const uint32_t k = buckets[bucket] + rank;
        if (rank == 0) buckets[bucket] = k + static_cast<uint32_t>(__builtin_popcountll(peers));
        order[k] = e;
      }
      __syncthreads();
    }
  }
  barrier_after_stores();  // order is read by every thread from here on

  // The runs of equal (cost, sequence) in sorted order: each position's run start by a max
  // scan of the positions where a run begins; a run's last position writes its length.
  const auto sorted = (const uint32_t*)order;
  carry = 0;
  for (uint32_t base = 0; base < entries; base += kVarlenJobThreads) {
    const uint32_t k = base + tid;
    uint64_t begins = 0;
    bool ends = false;
    if (k < entries) {
      // Runs are told apart by cost bucket and sequence.
      const auto buckets_of = (const uint32_t*)entry_bucket;
      const auto seqs_of = (const uint32_t*)entry_seq;
      const auto key = [&](uint32_t at) {
        const uint32_t e = sorted[at];
        return (static_cast<uint64_t>(buckets_of[e]) << 32) | seqs_of[e];
      };
      const uint64_t here = key(k);
      begins = k == 0 || key(k - 1) != here ? k : 0;
      ends = k + 1 == entries || key(k + 1) != here;
    }
    const uint64_t rs = scan_chunk<Max>(begins, carry, sums, &total);
    if (k < entries) {
      run_start[k] = static_cast<uint32_t>(rs);
      if (ends) run_len[rs] = k + 1 - static_cast<uint32_t>(rs);
    }
    carry = total > carry ? total : carry;
  }
  barrier_after_stores();  // run_start and run_len are read by every thread from here on

  // Every job to its slot: the heads of the entry at sorted position k, from one thread, so
  // that the reads that find the entry's sequence (a chain of dependent loads) happen once
  // per entry rather than once per job.
  const auto rstart = (const uint32_t*)run_start;
  const auto rlen = (const uint32_t*)run_len;
  for (uint32_t k = tid; k < entries; k += kVarlenJobThreads) {
    const uint32_t e = sorted[k], rs = rstart[k], len = rlen[rs];
    const int32_t b = static_cast<int32_t>(((const uint32_t*)entry_seq)[e]);
    const varlen::Seq q = varlen::seq_at(cu_q, cu_k, b, s);
    const uint32_t p = e - starts[b];
    for (uint32_t h = 0; h < heads; ++h) {
      const varlen::Job job = varlen::pair_job(q, b, h, p, s);
      const uint32_t slot = varlen::slot_of(varlen::sorted_job(k, rs, len, h, s), jobs, s.grid);
      table[3 + g + 2 * slot] = job.tile_a;
      table[4 + g + 2 * slot] = job.tile_b;
    }
  }
  if (tid <= g) varlen::write_header((uint32_t*)table, tid, kVarlenJobThreads, jobs, s);
}
