// Inputs whose scores are huge but fit in fp32: q scaled by a power of two (BF16: its
// elements; FP8: its descale) so that the largest bound on a row's base-2 score,
// max over (row, key <= row) of |scale * log2(e) * dq * dk| * sum_i |q_i k_i|, is close to
// 2^target_log2. Every partial sum of the kernels' dot products then fits in fp32 as well.
#pragma once

#include <algorithm>
#include <cmath>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

inline AttnData with_scores_near(const AttnData& clean, int target_log2) {
  AttnData a = clean;
  const AttnConfig& c = a.cfg;
  double bound = 0.0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t hk = h / (c.heads / c.heads_k);
      const double f = std::abs(a.softmax_scale() * 1.4426950408889634 * a.q_descale[b * c.heads_k + hk] *
                                a.k_descale[b * c.heads_k + hk]);
      for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t t = 0; t <= s; ++t) {
          double sum = 0.0;
          for (int64_t i = 0; i < c.d_qk; ++i) sum += std::abs(a.q_at(b, s, h, i) * a.k_at(b, t, hk, i));
          bound = std::max(bound, f * sum);
        }
    }
  const int e = target_log2 - static_cast<int>(std::ceil(std::log2(bound)));
  if (c.dtype == ZYFA_DTYPE_BF16) {
    // Exponent field + e on every nonzero element of q (the copy holds q's bytes only).
    for (size_t i = 0; i + 1 < a.q.size(); i += 2) {
      uint16_t v = static_cast<uint16_t>(a.q[i] | (a.q[i + 1] << 8));
      if ((v & 0x7F80) == 0) continue;  // zero (inputs hold no subnormals)
      v = static_cast<uint16_t>(v + (e << 7));
      a.q[i] = static_cast<uint8_t>(v);
      a.q[i + 1] = static_cast<uint8_t>(v >> 8);
    }
  } else {
    for (float& d : a.q_descale) d = std::ldexp(d, e);
    for (size_t i = 0; i < a.descale_block() && !a.dev_descales.empty(); ++i)
      a.dev_descales[i] = std::ldexp(a.dev_descales[i], e);
  }
  return a;
}

// LSE values that are not finite; the largest error of the others relative to
// max(1, |reference|), printed; and the rows whose error passes what fp32 scores allow. A
// score's fp32 dot product of d_qk exact products errs by at most (d_qk - 1) u times the sum
// of the products' magnitudes (and the scale's multiply by u of the score), with u = 2^-24
// for round-to-nearest and 2^-23 for accumulators that truncate (taken, so that one bound
// holds for every backend); the LSE moves by at most the largest change of a visible score
// (log-sum-exp is 1-Lipschitz in the max norm): bound = (d_qk + 1) 2^-23 max over the row's
// keys of |scale dq dk| sum_i |q_i k_i|, plus the LSE's own fp32 rounding (2^-23 |LSE|) and
// 10^-5 nats for its exponentials and log. A bound per row, because sum_i |q_i k_i| can be
// many times |q . k| when the products cancel.
struct LseError {
  int64_t nonfinite = 0;
  double worst_rel = 0.0;
  int64_t over_bound = 0;
  double worst_over = 0.0;  // largest error / bound
};
inline LseError lse_error(const AttnData& a, const ReferenceResult& ref, const float* lse) {
  LseError e;
  const AttnConfig& c = a.cfg;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t hk = h / (c.heads / c.heads_k);
      const double f = std::abs(static_cast<double>(a.softmax_scale()) * a.q_descale[b * c.heads_k + hk] *
                                a.k_descale[b * c.heads_k + hk]);
      for (int64_t s = 0; s < c.seqlen; ++s) {
        const size_t i = static_cast<size_t>((b * c.heads + h) * c.seqlen + s);
        if (!std::isfinite(lse[i])) {
          ++e.nonfinite;
          continue;
        }
        const double err = std::abs(lse[i] - ref.lse[i]);
        e.worst_rel = std::max(e.worst_rel, err / std::max(1.0, std::abs(ref.lse[i])));
        double magnitude = 0.0;
        for (int64_t t = 0; t <= s; ++t) {
          double sum = 0.0;
          for (int64_t d = 0; d < c.d_qk; ++d) sum += std::abs(a.q_at(b, s, h, d) * a.k_at(b, t, hk, d));
          magnitude = std::max(magnitude, f * sum);
        }
        const double bound = static_cast<double>(c.d_qk + 1) * 0x1p-23 * magnitude + 0x1p-23 * std::abs(ref.lse[i]) + 1e-5;
        if (err > bound) ++e.over_bound;
        e.worst_over = std::max(e.worst_over, err / bound);
      }
    }
  return e;
}

}  // namespace zyfa::test
