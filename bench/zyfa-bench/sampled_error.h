// Accuracy of a benchmarked output on sampled rows against an fp64 reference computed on the
// host from the very inputs (decoded FP8 codes times descales, or BF16 values) the kernels read.
//
// The figure is per row: e_r = ||o_r - ref_r|| / ||ref_r||, reported as its mean and maximum
// over rows spread over the whole length (log-spaced short rows and uniformly spaced long
// ones) of several heads. The pooled figure ||o - ref|| / ||ref|| over all sampled rows is kept
// beside it only for comparison with older runs: with causal attention on zero-mean inputs a
// row's output shrinks like 1/sqrt(r + 1), so the pooled figure is mostly rows 0..few, whose
// probabilities are exact, and measures little more than their final output rounding.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace zyfa::bench {

// Copies `rows` rows of `width` bytes, `pitch` bytes apart in the kernels' memory starting at
// src, to dst on the host (packed); false on error.
using ReadRows = std::function<bool(void* dst, const void* src, size_t width, size_t pitch, int64_t rows)>;
ReadRows host_read_rows();  // plain memcpy, for the cpu and emu backends

struct SampledInputs {
  const void *q, *k, *v;  // bshd contiguous in the kernels' memory; batch 0 is sampled
  float descale[3];       // q, k, v (1 for BF16)
  bool fp8;
  int64_t batch, seqlen, heads, heads_k, d_qk, d_v;
  ReadRows read;
  // Keys when more than queries (causal aligned bottom-right: row r sees keys up to
  // r + seqlen_k - seqlen); 0: seqlen. One sequence of a varlen batch is sampled the same way,
  // from pointers to its first row.
  int64_t seqlen_k = 0;
  int64_t lse_stride = 0;  // floats between heads of the LSE (varlen: total_q); 0: seqlen
};

// Sampled rows: 0, 1, 2, ... log-spaced (4 per octave) plus 32 evenly spaced up to seqlen - 1.
std::vector<int64_t> sampled_rows(int64_t seqlen);
// Sampled heads: 0, H/3, 2H/3, H - 1 (distinct).
std::vector<int64_t> sampled_heads(int64_t heads);

struct SampledError {
  int64_t rows = 0;             // sampled (head, row) pairs
  double row_rel_mean = -1.0;   // mean over sampled rows of ||o_r - ref_r|| / ||ref_r||
  double row_rel_max = -1.0;    // its maximum ...
  int64_t worst_head = -1, worst_row = -1;  // ... and where
  double pooled_rel = -1.0;     // ||o - ref|| / ||ref|| over all sampled rows together
  double max_abs = -1.0;        // max |o - ref| over sampled elements
  double lse_mean = -1.0, lse_max = -1.0;  // |lse_r - ref_r| in nats (when the kernel gave LSE)
  int64_t nonfinite = 0;        // NaN/inf outputs or LSE values (each counts as an infinite error)
  double err2 = 0, ref2 = 0;    // the sums behind pooled_rel (so that figures can be merged)
};

// The figures of two sets of sampled rows together (several sequences of a varlen batch).
SampledError merge(const SampledError& a, const SampledError& b);

// The fp64 reference of the sampled rows, computed once per configuration and compared with
// each kernel's output.
class SampledReference {
 public:
  explicit SampledReference(const SampledInputs& in);
  bool ok() const { return ok_; }
  // out: bshd (B, S, H, d_v) BF16, or e4m3 codes when out_fp8 (scale 1); lse: (B, H, S) float
  // natural-log sum-exp of the scaled scores, or null.
  SampledError compare(const void* out, bool out_fp8, const float* lse) const;

 private:
  SampledInputs in_;
  std::vector<int64_t> rows_, heads_;
  std::vector<double> ref_;  // [head][row][d_v]
  std::vector<double> lse_;  // [head][row]
  bool ok_ = true;
};

}  // namespace zyfa::bench
