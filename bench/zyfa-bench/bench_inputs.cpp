#include "bench_inputs.h"

#include <random>

namespace zyfa::bench {
namespace {

// As realistic_stats() of tests/support/inputs.cpp: log-normal scales (heavy tail), a mean of
// mean_gain * scale * N(0, 1) per channel, and in q and k two RoPE pairs of the lowest
// frequencies with the fixed gain 6 (outlier channels).
void channel_stats(std::mt19937_64& rng, int64_t d, bool outliers, double mean_gain, float* scale, float* mean) {
  std::normal_distribution<double> n01(0.0, 1.0);
  for (int64_t i = 0; i < d; ++i) {
    scale[i] = static_cast<float>(std::exp(0.6 * n01(rng)));
    mean[i] = static_cast<float>(mean_gain * scale[i] * n01(rng));
  }
  if (!outliers) return;
  const int64_t n = realistic_rope_n(d), half = n / 2, base = d - n;
  for (int p = 0; p < 2; ++p) {
    for (int64_t c : {base + half - 1 - p, base + n - 1 - p}) {
      scale[c] = 6.0f;
      mean[c] = static_cast<float>(mean_gain * 6.0 * n01(rng));
    }
  }
}

}  // namespace

const char* to_string(InputKind k) { return k == InputKind::REALISTIC ? "realistic" : "gaussian"; }

RealisticStats realistic_stats(int64_t heads_k, int64_t d_qk, int64_t d_v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  RealisticStats st;
  for (auto* v : {&st.q_scale, &st.q_mean, &st.k_scale, &st.k_mean, &st.k_sink}) v->resize(heads_k * d_qk);
  st.v_scale.resize(heads_k * d_v);
  st.v_mean.resize(heads_k * d_v);
  for (int64_t hk = 0; hk < heads_k; ++hk) {
    const int64_t oq = hk * d_qk, ov = hk * d_v;
    channel_stats(rng, d_qk, true, 0.5, &st.q_scale[oq], &st.q_mean[oq]);
    channel_stats(rng, d_qk, true, 0.3, &st.k_scale[oq], &st.k_mean[oq]);
    channel_stats(rng, d_v, false, 0.2, &st.v_scale[ov], &st.v_mean[ov]);
    // Attention sink: key 0 gains 14 nats of score along the mean query direction.
    double norm = 0;
    for (int64_t i = 0; i < d_qk; ++i) norm += double(st.q_mean[oq + i]) * st.q_mean[oq + i];
    norm = std::sqrt(norm);
    const double gain = 14.0 * std::sqrt(static_cast<double>(d_qk)) / norm;
    for (int64_t i = 0; i < d_qk; ++i) st.k_sink[oq + i] = static_cast<float>(gain * st.q_mean[oq + i] / norm);
  }
  return st;
}

}  // namespace zyfa::bench
