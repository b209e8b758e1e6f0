// Sequence lengths of zyfa-bench's --varlen and --chunk runs, and the exact causal work of a
// batch of them.
//
// The causal mask is aligned bottom-right (flash-attn >= 2.1, docs/api.md): query i of a
// sequence with Lq queries and Lk keys sees keys j <= i + Lk - Lq. Its visible (query, key)
// pairs are sum_i max(0, min(Lk, i + Lk - Lq + 1)), and the FLOPs of attention over them are
// 2 * pairs * (d_qk + d_v) per head (one multiply-add for each of the d_qk products of Q K^T
// and the d_v products of P V). Fixed-length runs use the same count, so the TFLOP/s of a
// varlen batch, a chunk and the equal-work fixed call can be compared directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa::bench {

struct VarlenLengths {
  std::vector<int64_t> q, k;  // per sequence
  std::string spec;           // as given, for the report
};

// spec: "256,8192,1000" (query lengths) or "random:N:LO:HI:SEED" (N lengths drawn uniformly in
// [LO, HI] from a seeded generator). Keys per sequence = queries + k_extra (a cached prefix).
// False with *err naming the problem; *out is untouched then.
bool parse_varlen(const std::string& spec, int64_t k_extra, VarlenLengths* out, std::string* err);

// "LQ:LK" of --chunk, LQ >= 1, LK >= LQ.
bool parse_chunk(const std::string& spec, int64_t* lq, int64_t* lk, std::string* err);

// Visible (query, key) pairs of one sequence under the bottom-right causal mask.
int64_t causal_pairs(int64_t lq, int64_t lk);

// The fixed length S >= 1 whose causal pairs S (S + 1) / 2 are closest to `pairs`.
int64_t equal_work_seqlen(int64_t pairs);

// The length L of `batch` equal sequences with L + extra keys each whose causal work,
// batch * causal_pairs(L, L + extra), is closest to pairs (the shorter one on a tie).
int64_t equal_batch_seqlen(int64_t pairs, int64_t batch, int64_t extra);

// 0, l0, l0 + l1, ...: the cu_seqlens of a packed batch (callers bound the total to int32).
std::vector<int32_t> prefix_sums(const std::vector<int64_t>& lens);

// "16 sequences, q 256..8192 (total 65536), k = q + 0" and the lengths themselves.
std::string describe(const VarlenLengths& l);

}  // namespace zyfa::bench
