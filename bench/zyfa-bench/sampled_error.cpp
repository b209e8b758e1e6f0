#include "sampled_error.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

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

// One head's (seqlen, d) slice of a bshd tensor, decoded to double.
std::vector<double> head_slice(const void* dev, bool fp8, double scale, int64_t seqlen, int64_t heads, int64_t d,
                               int64_t head) {
  const size_t elem = fp8 ? 1 : 2;
  std::vector<uint8_t> raw(seqlen * d * elem);
  cudaMemcpy2D(raw.data(), d * elem, static_cast<const uint8_t*>(dev) + head * d * elem, heads * d * elem,
               d * elem, seqlen, cudaMemcpyDeviceToHost);
  std::vector<double> out(seqlen * d);
  for (int64_t i = 0; i < seqlen * d; ++i) {
    if (fp8) {
      out[i] = e4m3_value(raw[i]) * scale;
    } else {
      uint16_t b;
      std::memcpy(&b, &raw[2 * i], 2);
      out[i] = bf16_value(b);
    }
  }
  return out;
}

}  // namespace

SampledError sampled_error(const SampledInputs& in, const void* out, bool out_fp8) {
  float ds[3] = {1, 1, 1};
  if (in.fp8) cudaMemcpy(ds, in.descales, sizeof ds, cudaMemcpyDeviceToHost);
  const double scale = 1.0 / std::sqrt(static_cast<double>(in.d_qk));
  std::set<int64_t> heads = {0, in.heads / 2, in.heads - 1};
  std::set<int64_t> rows;
  for (int i = 0; i < 48; ++i) rows.insert(std::min<int64_t>(in.seqlen - 1, (in.seqlen - 1) * i / 47));
  double err2 = 0, ref2 = 0, max_abs = 0;
  for (int64_t h : heads) {
    const int64_t hk = h / (in.heads / in.heads_k);
    const std::vector<double> q = head_slice(in.q, in.fp8, ds[0], in.seqlen, in.heads, in.d_qk, h);
    const std::vector<double> k = head_slice(in.k, in.fp8, ds[1], in.seqlen, in.heads_k, in.d_qk, hk);
    const std::vector<double> v = head_slice(in.v, in.fp8, ds[2], in.seqlen, in.heads_k, in.d_v, hk);
    const std::vector<double> o = head_slice(out, out_fp8, 1.0, in.seqlen, in.heads, in.d_v, h);
    std::vector<double> s(in.seqlen), acc(in.d_v);
    for (int64_t r : rows) {
      double mx = -INFINITY;
      for (int64_t j = 0; j <= r; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < in.d_qk; ++i) dot += q[r * in.d_qk + i] * k[j * in.d_qk + i];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0;
      for (int64_t j = 0; j <= r; ++j) {
        const double p = std::exp(s[j] - mx);
        sum += p;
        for (int64_t i = 0; i < in.d_v; ++i) acc[i] += p * v[j * in.d_v + i];
      }
      for (int64_t i = 0; i < in.d_v; ++i) {
        const double ref = acc[i] / sum, got = o[r * in.d_v + i];
        const double e = std::isfinite(got) ? got - ref : INFINITY;
        err2 += e * e;
        ref2 += ref * ref;
        max_abs = std::max(max_abs, std::fabs(e));
      }
    }
  }
  SampledError r;
  r.rel_rms = std::sqrt(err2 / ref2);
  r.max_abs = max_abs;
  return r;
}

}  // namespace zyfa::bench
