#include "support/varlen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <sstream>
#include <stdexcept>

#include "parallel.h"

namespace zyfa::test {
namespace {

constexpr int64_t kDv = 128;

bool bf16_finite(uint16_t v) { return (v & 0x7F80) != 0x7F80; }

// NaN in every element of `rows` rows from `row0` of a packed (1, total, heads, d) tensor.
void fill_nan(std::vector<uint8_t>& buf, size_t eb, int64_t row0, int64_t rows, int64_t row_elems) {
  for (int64_t e = row0 * row_elems; e < (row0 + rows) * row_elems; ++e) {
    if (eb == 2) {
      const uint16_t nan = 0x7FC0;
      std::memcpy(&buf[e * 2], &nan, 2);
    } else {
      buf[e] = 0x7F;  // e4m3fn NaN
    }
  }
}

// Copies rows [src_row0, src_row0 + rows) of a batch-1 bshd AttnData tensor to packed row dst_row0.
void copy_rows(std::vector<uint8_t>& dst, const std::vector<uint8_t>& src, size_t eb, int64_t src_row0,
               int64_t dst_row0, int64_t rows, int64_t row_elems) {
  if (rows > 0)
    std::memcpy(&dst[dst_row0 * row_elems * eb], &src[src_row0 * row_elems * eb], rows * row_elems * eb);
}

zyfa_tensor_t packed(void* p, zyfa_dtype_t dt, int64_t batch, int64_t rows, int64_t heads, int64_t d) {
  return zyfa_tensor_bshd(p, dt, batch, rows, heads, d);
}

}  // namespace

std::string VarlenConfig::name() const {
  std::string n = kind_name(dtype, d_qk, kDv, heads, heads_k) + "_" + lens_name + inputs_name(inputs, std);
  if (!lse) n += "_NoLse";
  if (fixed) n += "_Fixed";
  return n;
}

VarlenConfig VarlenConfig::of(zyfa_dtype_t dtype, int64_t d_qk, int64_t heads, int64_t heads_k, std::string lens_name,
                              std::vector<int32_t> lens_q, std::vector<int32_t> lens_k) {
  VarlenConfig c;
  c.dtype = dtype;
  c.d_qk = d_qk;
  c.heads = heads;
  c.heads_k = heads_k;
  c.lens_name = std::move(lens_name);
  c.lens_q = std::move(lens_q);
  c.lens_k = std::move(lens_k);
  return c;
}

int32_t VarlenData::max_len_q() const { return *std::max_element(cfg.lens_q.begin(), cfg.lens_q.end()); }
int32_t VarlenData::max_len_k() const { return *std::max_element(cfg.lens_k.begin(), cfg.lens_k.end()); }

int64_t VarlenData::lse_index(int64_t b, int64_t h, int64_t s) const {
  if (cfg.fixed) return (b * cfg.heads + h) * cfg.lens_q[0] + s;
  return h * total_q + cu_q[b] + s;
}

int64_t VarlenData::visible_keys(int64_t b, int64_t s) const {
  const int64_t lq = cfg.lens_q[b], lk = cfg.lens_k[b];
  return std::clamp<int64_t>(s + lk - lq + 1, 0, lk);
}

VarlenData make_varlen_data(const VarlenConfig& c) {
  const int64_t B = c.batch();
  if (B < 1 || c.lens_k.size() != c.lens_q.size())
    throw std::invalid_argument("make_varlen_data: lens_q and lens_k must name the same sequences in " + c.name());
  VarlenData a;
  a.cfg = c;
  const int64_t gap = c.fixed ? 0 : kVarlenGap;
  if (c.fixed)
    for (int64_t b = 0; b < B; ++b)
      if (c.lens_q[b] != c.lens_q[0] || c.lens_k[b] != c.lens_k[0])
        throw std::invalid_argument("make_varlen_data: a fixed-length call needs equal lengths in " + c.name());
  for (int64_t b = 0; b < B; ++b) {
    AttnConfig s = AttnConfig::of(c.dtype, c.d_qk, c.heads, c.heads_k, std::max({c.lens_q[b], c.lens_k[b], 1}))
                       .with(c.inputs, c.std)
                       .with(DescaleMode::DEVICE_PER_HEAD);
    s.seed = c.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(b);
    a.seqs.push_back(make_attn_data(s));
  }
  // The sequences follow each other from row `gap` on; `gap` rows of NaN end the tensors.
  a.cu_q.assign(1, static_cast<int32_t>(gap));
  a.cu_k.assign(1, static_cast<int32_t>(gap));
  for (int64_t b = 0; b < B; ++b) {
    a.cu_q.push_back(a.cu_q.back() + c.lens_q[b]);
    a.cu_k.push_back(a.cu_k.back() + c.lens_k[b]);
  }
  a.total_q = a.cu_q[B] + gap;
  a.total_k = a.cu_k[B] + gap;

  const size_t eb = a.elem_bytes();
  const int64_t q_row = c.heads * c.d_qk, k_row = c.heads_k * c.d_qk, v_row = c.heads_k * kDv;
  // NaN everywhere first: the gap rows, and kVarlenTrail bytes after each tensor.
  a.q.resize(a.total_q * q_row * eb + kVarlenTrail);
  a.k.resize(a.total_k * k_row * eb + kVarlenTrail);
  a.v.resize(a.total_k * v_row * eb + kVarlenTrail);
  fill_nan(a.q, eb, 0, a.q.size() / eb, 1);
  fill_nan(a.k, eb, 0, a.k.size() / eb, 1);
  fill_nan(a.v, eb, 0, a.v.size() / eb, 1);
  const int64_t blk = B * c.heads_k;
  if (c.dtype == ZYFA_DTYPE_FP8_E4M3) a.descales.assign(3 * blk, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    const AttnData& s = a.seqs[b];
    const int64_t lq = c.lens_q[b], lk = c.lens_k[b];
    copy_rows(a.q, s.q, eb, s.cfg.seqlen - lq, a.cu_q[b], lq, q_row);
    copy_rows(a.k, s.k, eb, 0, a.cu_k[b], lk, k_row);
    copy_rows(a.v, s.v, eb, 0, a.cu_k[b], lk, v_row);
    if (c.dtype == ZYFA_DTYPE_FP8_E4M3)
      for (int64_t hk = 0; hk < c.heads_k; ++hk) {
        a.descales[b * c.heads_k + hk] = s.q_descale[hk];
        a.descales[blk + b * c.heads_k + hk] = s.k_descale[hk];
        a.descales[2 * blk + b * c.heads_k + hk] = s.v_descale[hk];
      }
  }
  return a;
}

zyfa_fwd_desc_t VarlenData::desc(void* qp, void* kp, void* vp, void* outp, float* lsep, const int32_t* cuq,
                                 const int32_t* cuk, const float* dev) const {
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  const VarlenConfig& c = cfg;
  const int64_t B = c.batch();
  if (c.fixed) {
    d.q = packed(qp, c.dtype, B, c.lens_q[0], c.heads, c.d_qk);
    d.k = packed(kp, c.dtype, B, c.lens_k[0], c.heads_k, c.d_qk);
    d.v = packed(vp, c.dtype, B, c.lens_k[0], c.heads_k, kDv);
    d.out = packed(outp, ZYFA_DTYPE_BF16, B, c.lens_q[0], c.heads, kDv);
  } else {
    d.q = packed(qp, c.dtype, 1, total_q, c.heads, c.d_qk);
    d.k = packed(kp, c.dtype, 1, total_k, c.heads_k, c.d_qk);
    d.v = packed(vp, c.dtype, 1, total_k, c.heads_k, kDv);
    d.out = packed(outp, ZYFA_DTYPE_BF16, 1, total_q, c.heads, kDv);
    d.cu_seqlens_q = cuq;
    d.cu_seqlens_k = cuk;
    d.varlen_batch = static_cast<int32_t>(B);
    // Maxima above the longest sequence: they are bounds, not lengths.
    d.max_seqlen_q = max_len_q() + 5;
    d.max_seqlen_k = max_len_k() + 5;
  }
  d.lse = c.lse ? lsep : nullptr;
  if (c.dtype == ZYFA_DTYPE_FP8_E4M3) {
    zyfa_descale_t* out[3] = {&d.q_descale, &d.k_descale, &d.v_descale};
    for (int t = 0; t < 3; ++t) {
      *out[t] = zyfa_descale_device(dev + t * B * c.heads_k);
      out[t]->stride_batch = c.heads_k;  // per sequence
      out[t]->stride_head_k = 1;
    }
  }
  return d;
}

zyfa_fwd_desc_t VarlenData::host_desc(void* out, float* lse) {
  return desc(q.data(), k.data(), v.data(), out, lse, cu_q.data(), cu_k.data(), descales.data());
}

ReferenceResult reference_varlen_fp64(const VarlenData& a) {
  const VarlenConfig& c = a.cfg;
  const int64_t B = c.batch(), H = c.heads, Hk = c.heads_k, dq = c.d_qk, group = H / Hk;
  const double scale = a.seqs[0].softmax_scale();  // the float the API resolves 0 to
  ReferenceResult r;
  r.out.assign(a.total_q * H * kDv, 0.0);
  r.lse.assign(a.total_q * H, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const AttnData& s = a.seqs[b];
    const int64_t lq = c.lens_q[b], lk = c.lens_k[b], q_first = s.cfg.seqlen - lq;
    // Keys and values of each KV head, decoded and descaled once.
    std::vector<std::vector<double>> K(Hk), V(Hk);
    for (int64_t hk = 0; hk < Hk; ++hk) {
      K[hk].resize(std::max<int64_t>(lk, 1) * dq);
      V[hk].resize(std::max<int64_t>(lk, 1) * kDv);
      for (int64_t j = 0; j < lk; ++j) {
        for (int64_t i = 0; i < dq; ++i) K[hk][j * dq + i] = s.k_at(0, j, hk, i) * s.k_descale[hk];
        for (int64_t i = 0; i < kDv; ++i) V[hk][j * kDv + i] = s.v_at(0, j, hk, i) * s.v_descale[hk];
      }
    }
    parallel_for(lq * H, [&](int64_t item) {
      const int64_t row = item / H, h = item % H, hk = h / group;
      std::vector<double> q(dq);
      for (int64_t i = 0; i < dq; ++i) q[i] = s.q_at(0, q_first + row, h, i) * s.q_descale[hk];
      double* o = &r.out[((a.cu_q[b] + row) * H + h) * kDv];
      r.lse[a.lse_index(b, h, row)] =
          reference_row(q.data(), K[hk].data(), V[hk].data(), a.visible_keys(b, row), dq, kDv, scale, o);
    });
  }
  finish_reference(r);
  return r;
}

CheckResult check_varlen(const VarlenData& a, const ReferenceResult& ref, const uint16_t* out, const float* lse,
                         const Tolerance& tol) {
  const VarlenConfig& c = a.cfg;
  const int64_t H = c.heads, B = c.batch();
  std::string failure;
  auto add = [&failure](const std::string& m) { failure += (failure.empty() ? "" : "; ") + m; };
  // Which packed row belongs to which (sequence, row); -1 for gap rows.
  std::vector<int64_t> seq_of(a.total_q, -1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = a.cu_q[b]; r < a.cu_q[b + 1]; ++r) seq_of[r] = b;
  int64_t gap_written = 0, blind_wrong = 0;
  std::vector<int64_t> seen_rows;  // packed rows that see at least one key
  for (int64_t r = 0; r < a.total_q; ++r) {
    const int64_t b = seq_of[r];
    const bool blind = b >= 0 && a.visible_keys(b, r - a.cu_q[b]) == 0;
    if (b >= 0 && !blind) {
      seen_rows.push_back(r);
      continue;
    }
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < kDv; ++i) {
        const uint16_t v = out[(r * H + h) * kDv + i];
        if (b < 0 && !is_poison_bf16(v)) ++gap_written;
        if (blind && (v & 0x7FFF) != 0) ++blind_wrong;
      }
      if (lse && c.lse && b < 0 && !c.fixed && !is_poison_f32(lse[h * a.total_q + r])) ++gap_written;
      if (lse && c.lse && blind && lse[a.lse_index(b, h, r - a.cu_q[b])] != -INFINITY) ++blind_wrong;
    }
  }
  if (gap_written) add(fmt::format("{} values written in rows of no sequence", gap_written));
  if (blind_wrong) add(fmt::format("{} values of rows that see no key are not 0 (LSE -inf)", blind_wrong));

  // The rows that see keys, compacted into one (1, N, H, 128) call for check_output.
  const int64_t N = static_cast<int64_t>(seen_rows.size());
  CheckResult res;
  if (N > 0) {
    AttnData v;
    v.cfg = AttnConfig::of(c.dtype, c.d_qk, H, c.heads_k, N);
    v.cfg.lse = c.lse;
    const int64_t st[4] = {N * H * kDv, H * kDv, kDv, 1};
    std::copy(st, st + 4, v.out_stride);
    std::vector<uint16_t> o(N * H * kDv);
    std::vector<float> l(N * H);
    ReferenceResult rr;
    rr.out.resize(o.size());
    rr.lse.resize(l.size());
    for (int64_t n = 0; n < N; ++n) {
      const int64_t r = seen_rows[n], b = seq_of[r];
      std::copy(out + r * H * kDv, out + (r + 1) * H * kDv, o.begin() + n * H * kDv);
      std::copy(ref.out.begin() + r * H * kDv, ref.out.begin() + (r + 1) * H * kDv, rr.out.begin() + n * H * kDv);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t at = a.lse_index(b, h, r - a.cu_q[b]);
        if (lse && c.lse) l[h * N + n] = lse[at];
        rr.lse[h * N + n] = ref.lse[at];
      }
    }
    finish_reference(rr);
    res = check_output(v, rr, o.data(), lse && c.lse ? l.data() : nullptr, tol);
  }
  if (!failure.empty()) res.failure = res.failure.empty() ? failure : res.failure + "; " + failure;
  return res;
}

VarlenData with_nan_keys_after(const VarlenData& clean, const std::vector<int32_t>& cut) {
  VarlenData a = clean;
  const VarlenConfig& c = a.cfg;
  const size_t eb = a.elem_bytes();
  for (int64_t b = 0; b < c.batch(); ++b) {
    const int64_t rows = c.lens_k[b] - cut[b];
    fill_nan(a.k, eb, a.cu_k[b] + cut[b], rows, c.heads_k * c.d_qk);
    fill_nan(a.v, eb, a.cu_k[b] + cut[b], rows, c.heads_k * kDv);
  }
  return a;
}

std::string compare_varlen_unseen(const VarlenData& a, const std::vector<int32_t>& cut, const uint16_t* clean_out,
                                  const float* clean_lse, const uint16_t* dirty_out, const float* dirty_lse) {
  const VarlenConfig& c = a.cfg;
  const int64_t H = c.heads;
  std::ostringstream msg;
  int64_t changed = 0, finite_seen = 0;
  for (int64_t b = 0; b < c.batch(); ++b)
    for (int64_t s = 0; s < c.lens_q[b]; ++s) {
      const bool sees_nan = a.visible_keys(b, s) > cut[b];
      const int64_t r = a.cu_q[b] + s;
      for (int64_t h = 0; h < H; ++h) {
        const uint16_t* co = clean_out + (r * H + h) * kDv;
        const uint16_t* dout = dirty_out + (r * H + h) * kDv;
        if (!sees_nan) {
          const bool same = std::memcmp(co, dout, kDv * 2) == 0 &&
                            (!c.lse || std::memcmp(&clean_lse[a.lse_index(b, h, s)], &dirty_lse[a.lse_index(b, h, s)], 4) == 0);
          if (!same && changed++ == 0)
            msg << "sequence " << b << " row " << s << " head " << h << " (keys cut at " << cut[b] << ") changed; ";
        } else if (std::all_of(dout, dout + kDv, bf16_finite) && finite_seen++ == 0) {
          msg << "sequence " << b << " row " << s << " head " << h << " saw a NaN key and came out finite; ";
        }
      }
    }
  if (changed) msg << changed << " rows that see no NaN changed; ";
  if (finite_seen) msg << finite_seen << " rows that see a NaN came out finite";
  return msg.str();
}

std::string varlen_unseen_nan_difference(const VarlenConfig& c, const std::function<VarlenOutputs(VarlenData&)>& run) {
  VarlenData a = make_varlen_data(c);
  std::mt19937_64 rng(c.seed);
  std::vector<int32_t> cut;
  for (int32_t lk : c.lens_k) cut.push_back(static_cast<int32_t>(rng() % (uint64_t(lk) + 1)));
  VarlenData dirty = with_nan_keys_after(a, cut);
  const VarlenOutputs clean = run(a), dirty_run = run(dirty);
  for (const VarlenOutputs* o : {&clean, &dirty_run})
    if (o->status != ZYFA_STATUS_SUCCESS) return "the call failed: " + o->error;
  return compare_varlen_unseen(a, cut, clean.out.data(), clean.lse.data(), dirty_run.out.data(), dirty_run.lse.data());
}

Tolerance varlen_kernel_tolerance(const VarlenConfig& c) {
  AttnConfig k = AttnConfig::of(c.dtype, c.d_qk, c.heads, c.heads_k, 128);
  k.inputs = c.inputs;
  k.std = c.std;
  return kernel_tolerance(k);
}

std::vector<VarlenConfig> varlen_matrix() {
  const std::vector<int32_t> mixed = {0, 1, 67, 130, 5};
  const std::vector<int32_t> chunk_q = {1, 64, 37, 0, 100}, chunk_k = {200, 64, 101, 50, 300};
  std::vector<VarlenConfig> m;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    for (int64_t d : {128, 192}) {
      m.push_back(VarlenConfig::of(dt, d, 8, 2, "Mixed", mixed, mixed));
      m.push_back(VarlenConfig::of(dt, d, 8, 2, "Chunked", chunk_q, chunk_k).with(Inputs::GAUSSIAN, 1.0));
    }
    m.push_back(VarlenConfig::of(dt, 128, 4, 1, "Mixed", mixed, mixed).with(Inputs::RISING));
    m.push_back(VarlenConfig::of(dt, 192, 2, 2, "Chunked", chunk_q, chunk_k).with(Inputs::REALISTIC));
    m.push_back(VarlenConfig::of(dt, 128, 2, 2, "FewerKeys", {70, 5, 3}, {20, 0, 3}));
    m.push_back(VarlenConfig::of(dt, 128, 8, 2, "Chunked", chunk_q, chunk_k).without_lse());
    m.push_back(VarlenConfig::of(dt, 128, 8, 2, "Q70K190", {70, 70}, {190, 190}).as_fixed());
    m.push_back(VarlenConfig::of(dt, 192, 4, 1, "Q1K130", {1, 1, 1}, {130, 130, 130}).with(Inputs::GAUSSIAN, 1.0).as_fixed());
  }
  return m;
}

}  // namespace zyfa::test
