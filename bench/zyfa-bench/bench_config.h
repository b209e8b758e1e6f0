// One configuration of zyfa-bench: a fixed-length call (B, S, S_k), or a varlen batch packed
// along the rows of batch-1 tensors, and the descriptor of ZYFA's call for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::bench {

struct Config {
  zyfa_dtype_t dtype = ZYFA_DTYPE_BF16;
  // Fixed lengths: batch sequences of seqlen queries and seqlen_k keys (seqlen_k > seqlen:
  // --chunk). Varlen: batch 1, and seqlen / seqlen_k are the packed totals of lens_q / lens_k.
  int64_t batch = 1, seqlen = 0, seqlen_k = 0, heads = 0, heads_k = 0, d_qk = 128, d_v = 128;
  std::vector<int64_t> lens_q, lens_k;  // --varlen: per-sequence lengths; empty otherwise
  bool equal_work = false;              // also time ZYFA's fixed-length call of the same work

  bool varlen() const { return !lens_q.empty(); }
  std::string name() const;
  int64_t pairs() const;  // visible (query, key) pairs of one head, every sequence together
  double flops() const;   // 2 * pairs * (d_qk + d_v) * heads (varlen.h)
};

// ZYFA's causal call with batch 1, the same heads and head dims, and the length whose causal
// work is closest to c's.
Config equal_work_config(const Config& c);

// A varlen batch's fixed-length peer: as many sequences, all with one length (and the batch's
// extra keys per sequence), whose causal work is closest to c's: what the batch costs against
// the same requests padded to equal lengths, where equal_work_config also counts that shorter
// sequences do less work per tile.
Config equal_batch_config(const Config& c);

// ZYFA's descriptor of c over bshd buffers (q, k, v packed when varlen); cu_q / cu_k: the
// prefix sums of lens_q / lens_k in the backend's memory (ignored for fixed lengths).
zyfa_fwd_desc_t fwd_desc(const Config& c, void* q, void* k, void* v, void* out, const int32_t* cu_q,
                         const int32_t* cu_k, zyfa_backend_t backend);

}  // namespace zyfa::bench
