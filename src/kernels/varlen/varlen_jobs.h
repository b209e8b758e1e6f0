// The job table of a varlen call, built where the lengths are: on the device from cu_seqlens
// (kernels/cuda/varlen_jobs.cu, one block), or on the host for host-memory backends and tests,
// with the same functions below (plain C++, no library calls, so nvcc and the HIP compiler
// take it as is). The host never reads device lengths, so a graph captured with one set of
// lengths replays correctly with any other under the same maxima.
//
// The table has the format of host/job_table.h (the fixed-length kernels' format):
//   words[0] G, words[1] n_tiles = ceil(max_seqlen_q / T), words[2 .. 2+G] job offsets per
//   CTA, then (tile_a, tile_b) per job, a tile being (b * heads + h) * n_tiles + m with b the
//   sequence; kNoTile for none.
// A kernel reads sequence b's rows and lengths from cu_seqlens itself, through seq_at().
//
// Jobs: for each sequence, each query head, the query tiles paired first with last (tile p
// with tile tiles - 1 - p; the middle one alone), so causal work pairs within a sequence. The
// deal: the jobs sorted by cost (key blocks plus a fixed overhead per tile), largest first,
// ties in (sequence, head, pair) order, then dealt round by round, snaking (slot_of).
// - Balance: no two CTAs differ by more than the largest job (no CTA above W / G plus one
//   job; slot_of says why), and each CTA's jobs are in decreasing cost.
// - Locality: the G CTAs running at one time hold neighbouring jobs of the sorted order, and
//   a sequence's pairs (of equal cost, but for the first when the last tile is short and the
//   lone middle tile) are neighbours in it, so they share that sequence's K and V in L2. (Contiguous runs of equal
//   work per CTA balance as well, but put CTAs running at the same time on sequences far
//   apart, each streaming its own K and V from HBM.)
// The sort is a counting sort over the cost, whose range the maxima bound (cost_buckets).
#pragma once

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIP__)
#define ZYFA_VARLEN_HD __host__ __device__
#else
#define ZYFA_VARLEN_HD
#endif

namespace zyfa::varlen {

inline constexpr uint32_t kNoTile = 0xFFFFFFFFu;  // as host/job_table.h
inline constexpr uint32_t kTileOverhead = 2;      // key blocks' worth of fixed work per tile

// Everything the builder knows on the host: the call's shape and maxima, never a length.
struct Shape {
  int32_t batch;      // sequences (varlen_batch)
  int32_t heads;      // query heads
  int32_t tile_rows;  // T: query rows per tile
  int32_t block_n;    // keys per key block of the kernel
  int32_t max_q, max_k;       // max_seqlen_q, max_seqlen_k
  int64_t total_q, total_k;   // rows of the packed tensors
  int32_t grid;       // G: persistent CTAs
};

// Sequence b as the kernels see it. The prefix sums are clamped into the tensors and the
// maxima, so that bad device values can never move a read or write out of the tensors:
// start in [0, total], end in [start, total], length at most the maximum.
struct Seq {
  int64_t q0, k0;
  int32_t lq, lk;
};

ZYFA_VARLEN_HD inline int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Rows cu[b] .. cu[b+1] of a tensor of `total` rows, clamped: (first row, length).
struct Span {
  int64_t start;
  int32_t length;
};
ZYFA_VARLEN_HD inline Span span_of(int32_t begin, int32_t end, int64_t total, int32_t max_length) {
  Span r;
  r.start = clamp64(begin, 0, total);
  r.length = static_cast<int32_t>(clamp64(clamp64(end, r.start, total) - r.start, 0, max_length));
  return r;
}
ZYFA_VARLEN_HD inline Span span_at(const int32_t* cu, int32_t b, int64_t total, int32_t max_length) {
  return span_of(cu[b], cu[b + 1], total, max_length);
}

ZYFA_VARLEN_HD inline Seq seq_at(const int32_t* cu_q, const int32_t* cu_k, int32_t b, const Shape& s) {
  const Span q = span_at(cu_q, b, s.total_q, s.max_q), k = span_at(cu_k, b, s.total_k, s.max_k);
  return {q.start, k.start, q.length, k.length};
}

ZYFA_VARLEN_HD inline uint32_t n_tiles(const Shape& s) {
  return static_cast<uint32_t>((static_cast<int64_t>(s.max_q) + s.tile_rows - 1) / s.tile_rows);
}
ZYFA_VARLEN_HD inline uint32_t tiles_of(const Seq& q, const Shape& s) {
  return static_cast<uint32_t>((static_cast<int64_t>(q.lq) + s.tile_rows - 1) / s.tile_rows);
}
ZYFA_VARLEN_HD inline uint32_t pairs_of(const Seq& q, const Shape& s) { return (tiles_of(q, s) + 1) / 2; }

// Key blocks tile m of sequence q sees under the bottom-right causal mask (query i sees keys
// j <= i + lk - lq): 0 when none of its rows sees a key.
ZYFA_VARLEN_HD inline uint32_t tile_blocks(const Seq& q, uint32_t m, const Shape& s) {
  const int64_t last_row = static_cast<int64_t>(m + 1) * s.tile_rows - 1 < q.lq - 1
                               ? static_cast<int64_t>(m + 1) * s.tile_rows - 1
                               : static_cast<int64_t>(q.lq) - 1;
  const int64_t last_key = last_row + q.lk - q.lq;
  if (last_key < 0 || q.lk == 0) return 0;
  const int64_t blocks = last_key / s.block_n + 1, all = (static_cast<int64_t>(q.lk) + s.block_n - 1) / s.block_n;
  return static_cast<uint32_t>(blocks < all ? blocks : all);
}

// Per-sequence copies that a kernel needs aligned to its key groups (the Hopper FP8 kernel's vᵀ,
// whose keys are permuted within groups of 16): sequence b's keys start at column
// round_up(k0, 16) + 16 b, and its columns up to round_up(lk, 16) never reach the next
// sequence's first column (round_up(k0 + lk, 16) + 16 (b + 1) >= round_up(k0, 16) +
// round_up(lk, 16) + 16 b), for clamped sequences that do not overlap.
inline constexpr int64_t kGroupKeys = 16;
ZYFA_VARLEN_HD inline int64_t group_first_column(int32_t b, int64_t k0) {
  return (k0 + kGroupKeys - 1) / kGroupKeys * kGroupKeys + kGroupKeys * b;
}
// Columns that hold every sequence's groups, rounded up to `round` (a key block).
ZYFA_VARLEN_HD inline int64_t group_columns(int64_t total_k, int32_t batch, int64_t round) {
  const int64_t end = (total_k + kGroupKeys - 1) / kGroupKeys * kGroupKeys + kGroupKeys * batch;
  return (end + round - 1) / round * round;
}

// Jobs of the table at most, from the shape alone (sizes the device buffers): a sequence has
// at most ceil(n_tiles / 2) pairs per head since lq <= max_q. (A bound through total_q would
// be smaller, but bad prefix sums may make clamped sequences overlap.)
ZYFA_VARLEN_HD inline uint64_t entry_capacity(const Shape& s) {  // pairs (b, p), all heads at once
  return static_cast<uint64_t>(s.batch) * ((n_tiles(s) + 1) / 2);
}
ZYFA_VARLEN_HD inline uint64_t job_capacity(const Shape& s) { return static_cast<uint64_t>(s.heads) * entry_capacity(s); }
ZYFA_VARLEN_HD inline uint64_t table_words(const Shape& s) { return 3 + static_cast<uint64_t>(s.grid) + 2 * job_capacity(s); }

// Job j, given the first job of each sequence (job_start[b], b = 0..batch, exclusive prefix
// sums of heads * pairs_of): sequence, head, pair, and its two tile words and cost.
struct Job {
  uint32_t tile_a, tile_b, cost;
};

// The last b with starts[b] <= i: the sequence of job (or entry, below) i, sequences of none
// skipped.
ZYFA_VARLEN_HD inline int32_t sequence_of(uint32_t i, const uint32_t* starts, int32_t batch) {
  int32_t lo = 0, hi = batch;
  while (hi - lo > 1) {
    const int32_t mid = (lo + hi) / 2;
    if (starts[mid] <= i) lo = mid; else hi = mid;
  }
  return lo;
}

// Pair p of sequence b (seq q) for query head h.
ZYFA_VARLEN_HD inline Job pair_job(const Seq& q, int32_t b, uint32_t h, uint32_t p, const Shape& s) {
  const uint32_t tiles = tiles_of(q, s), other = tiles - 1 - p;
  const uint32_t stream = (static_cast<uint32_t>(b) * static_cast<uint32_t>(s.heads) + h) * n_tiles(s);
  Job r;
  r.tile_a = stream + p;
  r.tile_b = other != p ? stream + other : kNoTile;
  r.cost = tile_blocks(q, p, s) + kTileOverhead + (other != p ? tile_blocks(q, other, s) + kTileOverhead : 0);
  return r;
}

ZYFA_VARLEN_HD inline Job job_at(uint32_t j, const uint32_t* job_start, const int32_t* cu_q, const int32_t* cu_k,
                                 const Shape& s) {
  const int32_t b = sequence_of(j, job_start, s.batch);
  const Seq q = seq_at(cu_q, cu_k, b, s);
  const uint32_t pairs = pairs_of(q, s), local = j - job_start[b];
  const uint32_t h = local / pairs;
  return pair_job(q, b, h, local - h * pairs, s);
}

// The device builders sort entries rather than jobs: an entry is one pair (b, p) of a
// sequence for all heads at once, which share its cost, so there are `heads` times fewer to
// rank. Entry e, given entry_start (exclusive prefix sums of pairs_of), in (b, p) order: its
// sequence and cost (what the sort and its runs need).
struct Entry {
  int32_t b;
  uint32_t cost;
};
ZYFA_VARLEN_HD inline Entry entry_at(uint32_t e, const uint32_t* entry_start, const int32_t* cu_q, const int32_t* cu_k,
                                     const Shape& s) {
  const int32_t b = sequence_of(e, entry_start, s.batch);
  return {b, pair_job(seq_at(cu_q, cu_k, b, s), b, 0, e - entry_start[b], s).cost};
}

// Where build_serial puts a job, from the entries sorted stably by cost. In that order the
// entries of one sequence and one cost form a run [rs, rs + len) (the order within a cost is
// (b, p)). Sorted stably, the jobs of that cost come in job order (b, h, p): all jobs of the
// earlier runs of the cost (heads each), then sequence b's heads one after another, each
// with its len pairs in p order. Counting the jobs of earlier costs too (heads per entry),
// head h of the entry at sorted position k lands at heads * rs + h * len + (k - rs).
ZYFA_VARLEN_HD inline uint32_t sorted_job(uint32_t k, uint32_t rs, uint32_t len, uint32_t h, const Shape& s) {
  return static_cast<uint32_t>(s.heads) * rs + h * len + (k - rs);
}

// Scratch of the device builders, as offsets in uint32 words: entry_start (batch + 1 words);
// per entry e its cost bucket and sequence (entry_bucket, entry_seq: read once through
// entry_at, whose binary search is a chain of dependent loads); per sorted position k the
// entry there (order) and its run's first position (run_start); and, at a run's first
// position, the run's length (run_len).
struct Scratch {
  uint64_t entry_bucket, entry_seq, order, run_start, run_len, words;
};
ZYFA_VARLEN_HD inline Scratch scratch_layout(const Shape& s) {
  const uint64_t first = static_cast<uint64_t>(s.batch) + 1, e = entry_capacity(s);
  return {first, first + e, first + 2 * e, first + 3 * e, first + 4 * e, first + 5 * e};
}

// Sort key of a job: its bucket in the counting sort, largest cost first.
ZYFA_VARLEN_HD inline uint32_t max_job_cost(const Shape& s) {
  const uint64_t blocks = (static_cast<uint64_t>(s.max_k) + s.block_n - 1) / s.block_n;
  return static_cast<uint32_t>(2 * (blocks + kTileOverhead));
}
ZYFA_VARLEN_HD inline uint32_t cost_buckets(const Shape& s) { return max_job_cost(s) + 1; }
ZYFA_VARLEN_HD inline uint32_t bucket_of(uint32_t cost, const Shape& s) { return max_job_cost(s) - cost; }

// The deal: CTA w's first slot, and the slot of sorted job k. Round r = k / G gives its G
// jobs to CTAs 0, 1, ..., G - 1, or G - 1, ..., 0 when r is odd (a snake), except a last,
// partial round, whose jobs go to the first CTAs (those with a job more). With costs sorted
// largest first, a plain round robin gave CTA 0 the largest job of every round and the last
// CTA the smallest (the 16-sequence batch of docs/performance.md, G = 132: CTA 0 1.0% above
// the mean cost); the snake evens out each pair of rounds (0.4%). Any two CTAs still differ
// by at most the largest job: over rounds 2i and 2i + 1, CTA w < w' gets at most
// cost(2iG + w) - cost(2iG + w') more, and those differences telescope.
ZYFA_VARLEN_HD inline uint32_t cta_begin(uint32_t w, uint32_t jobs, int32_t grid) {
  const uint32_t g = static_cast<uint32_t>(grid);
  return w * (jobs / g) + (w < jobs % g ? w : jobs % g);
}
ZYFA_VARLEN_HD inline uint32_t slot_of(uint32_t k, uint32_t jobs, int32_t grid) {
  const uint32_t g = static_cast<uint32_t>(grid);
  const uint32_t r = k / g, c = k % g;
  const bool reverse = (r & 1u) != 0 && r < jobs / g;
  return cta_begin(reverse ? g - 1 - c : c, jobs, grid) + r;
}

// Writes the words of the table that are not jobs: G, n_tiles and the CTAs' offsets.
ZYFA_VARLEN_HD inline void write_header(uint32_t* words, uint32_t first_cta, uint32_t stride, uint32_t jobs,
                                        const Shape& s) {
  const uint32_t g = static_cast<uint32_t>(s.grid);
  for (uint32_t w = first_cta; w <= g; w += stride) words[2 + w] = cta_begin(w, jobs, s.grid);
  if (first_cta == 0) {
    words[0] = g;
    words[1] = n_tiles(s);
  }
}

// The whole table by one thread, in the order the device kernel's steps produce it: the host
// builder of host-memory backends and the reference of the device one. Scratch: job_start
// holds batch + 1 words, buckets cost_buckets(s); words table_words(s). Returns the number of
// jobs.
ZYFA_VARLEN_HD inline uint32_t build_serial(const int32_t* cu_q, const int32_t* cu_k, const Shape& s,
                                            uint32_t* job_start, uint32_t* buckets, uint32_t* words) {
  job_start[0] = 0;
  for (int32_t b = 0; b < s.batch; ++b)
    job_start[b + 1] = job_start[b] + static_cast<uint32_t>(s.heads) * pairs_of(seq_at(cu_q, cu_k, b, s), s);
  const uint32_t jobs = job_start[s.batch], nb = cost_buckets(s);
  // Counting sort: jobs per cost, their first sorted position, then each job in order.
  for (uint32_t c = 0; c < nb; ++c) buckets[c] = 0;
  for (uint32_t j = 0; j < jobs; ++j) ++buckets[bucket_of(job_at(j, job_start, cu_q, cu_k, s).cost, s)];
  uint32_t sum = 0;
  for (uint32_t c = 0; c < nb; ++c) {
    const uint32_t n = buckets[c];
    buckets[c] = sum;
    sum += n;
  }
  const uint32_t g = static_cast<uint32_t>(s.grid);
  for (uint32_t j = 0; j < jobs; ++j) {
    const Job job = job_at(j, job_start, cu_q, cu_k, s);
    const uint32_t slot = slot_of(buckets[bucket_of(job.cost, s)]++, jobs, s.grid);
    words[3 + g + 2 * slot] = job.tile_a;
    words[4 + g + 2 * slot] = job.tile_b;
  }
  write_header(words, 0, 1, jobs, s);
  return jobs;
}

}  // namespace zyfa::varlen
