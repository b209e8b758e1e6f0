// Varlen batches and chunked prefill for the tests of every backend: sequences of their own
// query and key lengths packed along the rows of batch-1 tensors (or, with equal lengths, a
// fixed-length call with seqlen_k >= seqlen_q), their fp64 reference and the output check.
//
// Each sequence is made by make_attn_data with seqlen max(L_q, L_k): its queries are the last
// L_q rows and its keys the first L_k rows, so with L_k >= L_q the queries are the end of the
// key sequence (chunked prefill) and the generators' positions (RoPE, rising maxima) hold.
// The packed tensors hold kVarlenGap rows of NaN before the first sequence and after the last
// (cu_seqlens[0] = kVarlenGap), and each buffer kVarlenTrail bytes of NaN after its tensor: a
// kernel that reads a row of no sequence, or writes one, fails every test.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

inline constexpr int64_t kVarlenGap = 3;
inline constexpr size_t kVarlenTrail = 1024;

struct VarlenConfig {
  zyfa_dtype_t dtype = ZYFA_DTYPE_BF16;
  int64_t d_qk = 128, heads = 1, heads_k = 1;
  std::string lens_name;  // names the lengths in the test name ("Mixed", "Chunked", ...)
  std::vector<int32_t> lens_q, lens_k;
  Inputs inputs = Inputs::GAUSSIAN;
  double std = 0.1;
  bool lse = true;
  // Described as (B, S_q) and (B, S_k) tensors without cu_seqlens (equal lengths, no gaps).
  bool fixed = false;
  uint64_t seed = 1;

  // "Fp8_D128_Gqa4_Chunked_Std1", plus "_NoLse", "_Fixed".
  std::string name() const;
  static VarlenConfig of(zyfa_dtype_t dtype, int64_t d_qk, int64_t heads, int64_t heads_k, std::string lens_name,
                         std::vector<int32_t> lens_q, std::vector<int32_t> lens_k);
  VarlenConfig with(Inputs in, double input_std = 0.1) const {
    VarlenConfig c = *this;
    c.inputs = in;
    c.std = input_std;
    return c;
  }
  VarlenConfig without_lse() const { VarlenConfig c = *this; c.lse = false; return c; }
  VarlenConfig as_fixed() const { VarlenConfig c = *this; c.fixed = true; return c; }
  int64_t batch() const { return static_cast<int64_t>(lens_q.size()); }
};

inline void PrintTo(const VarlenConfig& c, std::ostream* os) { *os << c.name() << " seed " << c.seed; }

struct VarlenData {
  VarlenConfig cfg;
  std::vector<AttnData> seqs;       // one per sequence, batch 1, FP8 descales per head
  std::vector<int32_t> cu_q, cu_k;  // batch + 1 prefix sums (gaps included)
  int64_t total_q = 0, total_k = 0;  // rows of the packed tensors
  std::vector<uint8_t> q, k, v;      // packed bshd (1, total, heads, d), then kVarlenTrail bytes
  // FP8: [q | k | v] blocks of batch * heads_k descales, index b * heads_k + hk.
  std::vector<float> descales;

  size_t elem_bytes() const { return cfg.dtype == ZYFA_DTYPE_BF16 ? 2 : 1; }
  size_t out_count() const { return static_cast<size_t>(total_q * cfg.heads * 128); }
  size_t lse_count() const { return cfg.lse ? static_cast<size_t>(total_q * cfg.heads) : 0; }
  // The LSE element of row s of sequence b, head h: (H, total_q) packed, or (B, H, S_q) fixed.
  int64_t lse_index(int64_t b, int64_t h, int64_t s) const;
  // Keys row s of sequence b sees (bottom-right causal; 0 when it sees none).
  int64_t visible_keys(int64_t b, int64_t s) const;
  int32_t max_len_q() const;
  int32_t max_len_k() const;

  // A descriptor for copies of q, k, v, cu_q, cu_k and descales in the backend's memory; out
  // has out_count() elements, lse lse_count() floats (or null). Backend left AUTO.
  zyfa_fwd_desc_t desc(void* q, void* k, void* v, void* out, float* lse, const int32_t* cu_q,
                       const int32_t* cu_k, const float* descales) const;
  zyfa_fwd_desc_t host_desc(void* out, float* lse);
};

VarlenData make_varlen_data(const VarlenConfig& cfg);

// fp64 reference: out in the packed (total_q, heads, 128) layout, lse at lse_index; gap rows
// and rows that see no key hold 0 (and -inf).
ReferenceResult reference_varlen_fp64(const VarlenData& data);

// Gap rows (out and LSE) must be unwritten, rows that see no key must be zeros with LSE -inf,
// every other row within `tol` of the reference (check_output over those rows).
CheckResult check_varlen(const VarlenData& data, const ReferenceResult& ref, const uint16_t* out,
                         const float* lse_or_null, const Tolerance& tol);

// The tolerance of a GPU kernel (kernel_tolerance) for a varlen configuration's dtype, head
// dim and inputs.
Tolerance varlen_kernel_tolerance(const VarlenConfig& c);

// A copy with NaN in every key and value row from cut[b] on of each sequence b (cut[b] in
// [0, L_k]). Rows that see only keys before their cut must come out bitwise as on the clean
// inputs (out and LSE), rows that see a NaN must not come out finite: compare_varlen_unseen
// returns the first difference, or "".
VarlenData with_nan_keys_after(const VarlenData& clean, const std::vector<int32_t>& cut);
std::string compare_varlen_unseen(const VarlenData& a, const std::vector<int32_t>& cut, const uint16_t* clean_out,
                                  const float* clean_lse, const uint16_t* dirty_out, const float* dirty_lse);

// The unseen-NaN check of every backend: NaN keys and values from a cut of each sequence
// drawn from the configuration's seed on; `run` runs a configuration on the backend and gives
// its out and LSE (status and message on failure). Returns "" when rows that see only keys
// before their cut come out bitwise as on the clean inputs and rows that see one are not
// finite, else the first difference (or the failed call).
struct VarlenOutputs {
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;
  std::vector<uint16_t> out;
  std::vector<float> lse;
};
std::string varlen_unseen_nan_difference(const VarlenConfig& cfg,
                                         const std::function<VarlenOutputs(VarlenData&)>& run);

// The length sets of the varlen tests: 0, 1 and tails, more keys than queries (chunked
// prefill), fewer keys than queries (rows that see no key), and equal lengths for the
// fixed-length seqlen_k > seqlen_q call.
std::vector<VarlenConfig> varlen_matrix();

}  // namespace zyfa::test
