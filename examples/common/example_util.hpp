// Small helpers shared by the C++ examples: BF16 conversion, random inputs, and a direct fp64
// causal attention to compare against. Deliberately simple; the test suite has the real reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace example {

inline float bf16_to_float(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

inline std::vector<float> gaussian(size_t n, float std, std::mt19937_64& rng) {
  std::normal_distribution<float> dist(0.0f, std);
  std::vector<float> x(n);
  for (auto& e : x) e = dist(rng);
  return x;
}

// out[b,s,h,:] for contiguous bshd float inputs, fp64 throughout.
inline std::vector<double> attention_fp64(const std::vector<float>& q, const std::vector<float>& k,
                                          const std::vector<float>& v, int B, int S, int H, int HK,
                                          int D) {
  std::vector<double> out(size_t(B) * S * H * D), w(S);
  const double scale = 1.0 / std::sqrt(double(D));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int hk = h / (H / HK);
      for (int s = 0; s < S; ++s) {
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t <= s; ++t) {
          double dot = 0;
          for (int c = 0; c < D; ++c)
            dot += double(q[((size_t(b) * S + s) * H + h) * D + c]) * k[((size_t(b) * S + t) * HK + hk) * D + c];
          w[t] = dot * scale;
          mx = std::max(mx, w[t]);
        }
        for (int t = 0; t <= s; ++t) sum += (w[t] = std::exp(w[t] - mx));
        for (int c = 0; c < D; ++c) {
          double acc = 0;
          for (int t = 0; t <= s; ++t) acc += w[t] * v[((size_t(b) * S + t) * HK + hk) * D + c];
          out[((size_t(b) * S + s) * H + h) * D + c] = acc / sum;
        }
      }
    }
  return out;
}

inline double relative_rms(const std::vector<uint16_t>& got_bf16, const std::vector<double>& ref) {
  double e2 = 0, r2 = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = bf16_to_float(got_bf16[i]) - ref[i];
    e2 += d * d;
    r2 += ref[i] * ref[i];
  }
  return std::sqrt(e2 / r2);  // NaN propagates, and NaN never compares as small
}

}  // namespace example
