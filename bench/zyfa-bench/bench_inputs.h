// The input kinds of zyfa-bench. The realistic kind is defined element by element from a
// counter-based Gaussian, so the host fill (cpu, emu) and the device fill (cuda) share one
// definition of it.
//
// gaussian:  i.i.d. N(0, std^2) in q, k and v (the benchmark protocol). With causal attention
//            row r averages r + 1 values of v, so its output shrinks like 1/sqrt(r + 1).
// realistic: the test suites' REALISTIC recipe (tests/support/inputs.cpp), per KV head:
//            log-normal channel scales with a per-channel mean (v's mean keeps long rows'
//            outputs from vanishing, as in real activations), 4 outlier channels of gain 6 in
//            q and k, RoPE on q and k, and an attention sink of 14 nats on key 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define ZYFA_BENCH_HD __host__ __device__ __forceinline__
#else
#define ZYFA_BENCH_HD inline
#endif

namespace zyfa::bench {

enum class InputKind { GAUSSIAN, REALISTIC };

const char* to_string(InputKind k);

ZYFA_BENCH_HD uint64_t mix64(uint64_t z) {  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Standard normal number i of the stream `seed` (Box-Muller from two 32-bit uniforms).
ZYFA_BENCH_HD float gaussian_at(uint64_t seed, int64_t i) {
  const uint64_t r = mix64(seed ^ mix64(static_cast<uint64_t>(i)));
  const float u1 = (static_cast<uint32_t>(r) + 1.0f) * 2.3283064365386963e-10f;  // (0, 1]
  const double u2 = static_cast<uint32_t>(r >> 32) * 2.3283064365386963e-10;
  return sqrtf(-2.0f * logf(u1)) * static_cast<float>(cos(6.283185307179586 * u2));
}

// One tensor of the realistic recipe, in bshd order (batch folded into the row index). scale,
// mean: heads_k * d floats, the statistics of each KV head's channels (the query heads of a
// group share them); sink: heads_k * d floats added to row 0 (key 0), or null.
struct RealisticTensor {
  const float* scale = nullptr;
  const float* mean = nullptr;
  const float* sink = nullptr;
  int64_t seqlen = 0, heads = 0, group = 1, d = 0;
  int64_t rope_n = 0;  // RoPE rotates pairs (i, i + rope_n / 2) of the last rope_n channels
  uint64_t seed = 0;
};

// Element idx = ((b * seqlen + s) * heads + h) * d + c.
ZYFA_BENCH_HD float realistic_at(const RealisticTensor& t, int64_t idx) {
  const int64_t c = idx % t.d, h = (idx / t.d) % t.heads, s = (idx / (t.d * t.heads)) % t.seqlen;
  const int64_t st = h / t.group * t.d;
  auto raw = [&](int64_t ch) { return t.mean[st + ch] + t.scale[st + ch] * gaussian_at(t.seed, idx - c + ch); };
  const int64_t base = t.d - t.rope_n, half = t.rope_n / 2;
  float x;
  if (c < base) {
    x = raw(c);
  } else {
    // The pair (a, b) = (base + j, base + j + half) turns by s * 10000^(-2j / rope_n).
    const int64_t j = (c - base) % half;
    const double theta = static_cast<double>(s) * pow(10000.0, -2.0 * static_cast<double>(j) / t.rope_n);
    const double cs = cos(theta), sn = sin(theta);
    const double a = raw(base + j), b = raw(base + j + half);
    x = static_cast<float>(c - base < half ? a * cs - b * sn : a * sn + b * cs);
  }
  if (t.sink != nullptr && s == 0) x += t.sink[st + c];
  return x;
}

// Host-side statistics of the realistic recipe for q, k and v, drawn from seed.
struct RealisticStats {
  std::vector<float> q_scale, q_mean, k_scale, k_mean, k_sink, v_scale, v_mean;
};
RealisticStats realistic_stats(int64_t heads_k, int64_t d_qk, int64_t d_v, uint64_t seed);

// RoPE width of the recipe: all of d_qk = 128, the last 64 channels of d_qk = 192.
inline int64_t realistic_rope_n(int64_t d_qk) { return d_qk == 192 ? 64 : d_qk; }

}  // namespace zyfa::bench
