#include "sampled_error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace zyfa::bench {
namespace {

double bf16_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double e4m3_value(uint8_t c) {
  const int e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return NAN;
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (c & 0x80) ? -v : v;
}

// One head's (seqlen, d) slice of batch 0 of a bshd tensor, decoded to double.
bool head_slice(const ReadRows& read, const void* src, bool fp8, double scale, int64_t seqlen, int64_t heads,
                int64_t d, int64_t head, std::vector<double>* out) {
  const size_t elem = fp8 ? 1 : 2;
  std::vector<uint8_t> raw(seqlen * d * elem);
  if (!read(raw.data(), static_cast<const uint8_t*>(src) + head * d * elem, d * elem, heads * d * elem, seqlen)) {
    return false;
  }
  out->resize(seqlen * d);
  for (int64_t i = 0; i < seqlen * d; ++i) {
    if (fp8) {
      (*out)[i] = e4m3_value(raw[i]) * scale;
    } else {
      uint16_t b;
      std::memcpy(&b, &raw[2 * i], 2);
      (*out)[i] = bf16_value(b);
    }
  }
  return true;
}

}  // namespace

ReadRows host_read_rows() {
  return [](void* dst, const void* src, size_t width, size_t pitch, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(static_cast<uint8_t*>(dst) + r * width, static_cast<const uint8_t*>(src) + r * pitch, width);
    }
    return true;
  };
}

std::vector<int64_t> sampled_rows(int64_t seqlen) {
  std::set<int64_t> rows;
  for (int k = 0;; ++k) {  // 4 per octave: rows 0..4, 5, 6, 7, 9, 10, 12, 15, 18, ...
    const int64_t r = static_cast<int64_t>(std::llround(std::exp2(k / 4.0))) - 1;
    if (r >= seqlen) break;
    rows.insert(r);
  }
  for (int i = 0; i < 32; ++i) rows.insert((seqlen - 1) * i / 31);
  return {rows.begin(), rows.end()};
}

std::vector<int64_t> sampled_heads(int64_t heads) {
  const std::set<int64_t> h = {0, heads / 3, 2 * heads / 3, heads - 1};
  return {h.begin(), h.end()};
}

SampledReference::SampledReference(const SampledInputs& in)
    : in_(in), rows_(sampled_rows(in.seqlen)), heads_(sampled_heads(in.heads)) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(in.d_qk));
  const int64_t group = in.heads / in.heads_k, nr = static_cast<int64_t>(rows_.size());
  ref_.assign(heads_.size() * nr * in.d_v, 0.0);
  lse_.assign(heads_.size() * nr, 0.0);
  const int64_t keys = in.seqlen_k > 0 ? in.seqlen_k : in.seqlen, shift = keys - in.seqlen;
  std::vector<double> q, k, v, s(keys);
  for (size_t hi = 0; hi < heads_.size(); ++hi) {
    const int64_t h = heads_[hi], hk = h / group;
    ok_ = ok_ && head_slice(in.read, in.q, in.fp8, in.descale[0], in.seqlen, in.heads, in.d_qk, h, &q) &&
          head_slice(in.read, in.k, in.fp8, in.descale[1], keys, in.heads_k, in.d_qk, hk, &k) &&
          head_slice(in.read, in.v, in.fp8, in.descale[2], keys, in.heads_k, in.d_v, hk, &v);
    if (!ok_) return;
    // Two-pass softmax in double over each sampled causal row (keys 0 .. r + shift).
    for (int64_t ri = 0; ri < nr; ++ri) {
      const int64_t r = rows_[ri], last = r + shift;
      double mx = -INFINITY;
      for (int64_t j = 0; j <= last; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < in.d_qk; ++i) dot += q[r * in.d_qk + i] * k[j * in.d_qk + i];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double* acc = &ref_[(hi * nr + ri) * in.d_v];
      double sum = 0;
      for (int64_t j = 0; j <= last; ++j) {
        const double p = std::exp(s[j] - mx);
        sum += p;
        for (int64_t i = 0; i < in.d_v; ++i) acc[i] += p * v[j * in.d_v + i];
      }
      for (int64_t i = 0; i < in.d_v; ++i) acc[i] /= sum;
      lse_[hi * nr + ri] = mx + std::log(sum);
    }
  }
}

SampledError SampledReference::compare(const void* out, bool out_fp8, const float* lse) const {
  SampledError e;
  const int64_t nr = static_cast<int64_t>(rows_.size());
  double err2_all = 0, ref2_all = 0, rel_sum = 0, lse_sum = 0;
  std::vector<double> o;
  std::vector<float> l(in_.seqlen);
  e.row_rel_max = e.max_abs = 0;
  if (lse) e.lse_max = 0;
  for (size_t hi = 0; hi < heads_.size(); ++hi) {
    const int64_t h = heads_[hi];
    if (!head_slice(in_.read, out, out_fp8, 1.0, in_.seqlen, in_.heads, in_.d_v, h, &o) ||
        (lse && !in_.read(l.data(), lse + h * (in_.lse_stride > 0 ? in_.lse_stride : in_.seqlen),
                          in_.seqlen * sizeof(float), 0, 1))) {
      return SampledError{};
    }
    for (int64_t ri = 0; ri < nr; ++ri) {
      const int64_t r = rows_[ri];
      const double* ref = &ref_[(hi * nr + ri) * in_.d_v];
      double err2 = 0, ref2 = 0;
      for (int64_t i = 0; i < in_.d_v; ++i) {
        const double got = o[r * in_.d_v + i];
        double d = INFINITY;  // NaN never passes: it counts as an infinite error
        if (std::isfinite(got)) d = got - ref[i];
        else ++e.nonfinite;
        err2 += d * d;
        ref2 += ref[i] * ref[i];
        e.max_abs = std::max(e.max_abs, std::fabs(d));
      }
      const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
      rel_sum += rel;
      if (rel > e.row_rel_max || e.worst_row < 0) {
        e.row_rel_max = rel;
        e.worst_head = h;
        e.worst_row = r;
      }
      err2_all += err2;
      ref2_all += ref2;
      if (lse) {
        double d = INFINITY;
        if (std::isfinite(l[r])) d = std::fabs(l[r] - lse_[hi * nr + ri]);
        else ++e.nonfinite;
        lse_sum += d;
        e.lse_max = std::max(e.lse_max, d);
      }
    }
  }
  e.rows = nr * static_cast<int64_t>(heads_.size());
  e.row_rel_mean = rel_sum / static_cast<double>(e.rows);
  e.pooled_rel = std::sqrt(err2_all / ref2_all);
  e.err2 = err2_all;
  e.ref2 = ref2_all;
  if (lse) e.lse_mean = lse_sum / static_cast<double>(e.rows);
  return e;
}

SampledError merge(const SampledError& a, const SampledError& b) {
  if (a.rows == 0) return b;
  if (b.rows == 0) return a;
  SampledError m = a.row_rel_max >= b.row_rel_max ? a : b;  // keeps the worst row's place
  m.rows = a.rows + b.rows;
  const double wa = static_cast<double>(a.rows) / m.rows, wb = static_cast<double>(b.rows) / m.rows;
  m.row_rel_mean = wa * a.row_rel_mean + wb * b.row_rel_mean;
  m.err2 = a.err2 + b.err2;
  m.ref2 = a.ref2 + b.ref2;
  m.pooled_rel = std::sqrt(m.err2 / m.ref2);
  m.max_abs = std::max(a.max_abs, b.max_abs);
  m.nonfinite = a.nonfinite + b.nonfinite;
  const bool lse = a.lse_max >= 0 && b.lse_max >= 0;  // merged only when both have it
  m.lse_mean = lse ? wa * a.lse_mean + wb * b.lse_mean : -1.0;
  m.lse_max = lse ? std::max(a.lse_max, b.lse_max) : -1.0;
  return m;
}

}  // namespace zyfa::bench
