// The fp64 reference: plain two-pass softmax over each causal row, in double everywhere,
// natural exp, on the decoded inputs times their descales. Deliberately shares no code with
// the cpu backend (which uses online softmax in tiles).
#include <cmath>
#include <vector>

#include "parallel.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

double reference_row(const double* q, const double* K, const double* V, int64_t n_keys, int64_t dq, int64_t dv,
                     double scale, double* o) {
  if (n_keys <= 0) return -INFINITY;  // sees no key: o stays 0
  std::vector<double> score(n_keys);
  double mx = -INFINITY;
  for (int64_t j = 0; j < n_keys; ++j) {
    const double* kj = &K[j * dq];
    double dot = 0;
    for (int64_t i = 0; i < dq; ++i) dot += q[i] * kj[i];
    score[j] = dot * scale;
    mx = std::max(mx, score[j]);
  }
  double sum = 0;
  for (int64_t j = 0; j < n_keys; ++j) {
    score[j] = std::exp(score[j] - mx);
    sum += score[j];
  }
  for (int64_t j = 0; j < n_keys; ++j) {
    const double p = score[j] / sum;
    const double* vj = &V[j * dv];
    for (int64_t i = 0; i < dv; ++i) o[i] += p * vj[i];
  }
  return mx + std::log(sum);
}

void finish_reference(ReferenceResult& r) {
  double sq = 0;
  for (double x : r.out) {
    sq += x * x;
    r.out_max = std::max(r.out_max, std::fabs(x));
  }
  r.out_rms = r.out.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(r.out.size()));
}

ReferenceResult reference_fp64(const AttnData& a, bool causal) {
  const auto& c = a.cfg;
  const int64_t B = c.batch, S = c.seqlen, H = c.heads, Hk = c.heads_k;
  const int64_t dq = c.d_qk, dv = c.d_v, group = H / Hk;
  const double scale = a.softmax_scale();
  ReferenceResult r;
  r.out.assign(B * S * H * dv, 0.0);
  r.lse.assign(B * H * S, 0.0);

  // Decode each (batch, kv head) once: k and v times their descales.
  std::vector<std::vector<double>> K(B * Hk), V(B * Hk);
  parallel_for(B * Hk, [&](int64_t bh) {
    const int64_t b = bh / Hk, hk = bh % Hk;
    const double kd = a.k_descale[bh], vd = a.v_descale[bh];
    K[bh].resize(S * dq);
    V[bh].resize(S * dv);
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t i = 0; i < dq; ++i) K[bh][s * dq + i] = a.k_at(b, s, hk, i) * kd;
      for (int64_t i = 0; i < dv; ++i) V[bh][s * dv + i] = a.v_at(b, s, hk, i) * vd;
    }
  });

  // One item per (batch, head, query row).
  parallel_for(B * H * S, [&](int64_t item) {
    const int64_t s = item % S, h = (item / S) % H, b = item / (S * H);
    const int64_t bh = b * Hk + h / group;
    const double qd = a.q_descale[bh];
    std::vector<double> q(dq);
    for (int64_t i = 0; i < dq; ++i) q[i] = a.q_at(b, s, h, i) * qd;
    r.lse[(b * H + h) * S + s] =
        reference_row(q.data(), K[bh].data(), V[bh].data(), causal ? s + 1 : S, dq, dv, scale,
                      &r.out[((b * S + s) * H + h) * dv]);
  });
  finish_reference(r);
  return r;
}

}  // namespace zyfa::test
