#include "support/fp8_model.h"

#include <algorithm>
#include <cmath>

#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"
#include "parallel.h"

namespace zyfa::model {

float kernel_rescale_threshold(zyfa_dtype_t dtype, int64_t d_qk) {
  if (dtype == ZYFA_DTYPE_FP8_E4M3) return 0.125f;
  return d_qk == 192 ? 8.0f : 0.5f;
}

KernelModelOptions kernel_options(const test::AttnConfig& c) {
  KernelModelOptions o;
  // The generated FP8 kernels (d_qk 128 and 192) take lean P and their online-softmax step (and
  // lazy-rescale test) per 64-key block, two per 128-key LDS tile.
  const bool lean = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  o.p_mode = lean ? PMode::LEAN : PMode::EXACT;
  if (lean) {
    o.tile_keys = 64;
    o.block_lift = kLeanBlockLift;
    o.lse_exact_rows = kLeanLseExactRows;
    o.lse_offset = kLeanLseOffset;
  }
  o.block_scaling = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  o.denominator = Denominator::ROUNDED_P;
  return o;
}

uint8_t lean_p_code(float x, float bias) {
  const float y = x * 8.0f + bias;
  if (!(y > 0.0f)) return 0;  // underflow (and NaN) clamp to code 0
  const int code = static_cast<int>(y);  // truncation, as v_cvt_u32_f32
  return static_cast<uint8_t>(std::min(code, 0x7E));
}

uint8_t exact_p_code(float x) { return numerics::float_to_e4m3(std::exp2(x), false); }

namespace {

// Inputs of one (batch, kv head) decoded to float (exact for BF16 and e4m3 values).
struct Decoded {
  std::vector<float> k, v;
};

float dot(const float* a, const float* b, int64_t n) {
  // Eight partial sums, like the interleaved accumulation of a matrix instruction; keeps
  // the loop vectorizable without reassociating beyond what the hardware does anyway.
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

void run_row(const test::AttnData& a, const KernelModelOptions& o, const Decoded& kv,
             int64_t b, int64_t h, int64_t row, float qk_factor, float vd, float threshold,
             std::vector<float>& q, std::vector<float>& t, std::vector<float>& p,
             std::vector<float>& acc, ModelResult& res) {
  const auto& c = a.cfg;
  const int64_t dq = c.d_qk, dv = c.d_v;
  const bool fp8 = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  const float lean_bias = o.lean_bias >= 0 ? o.lean_bias : kLeanBias;
  for (int64_t i = 0; i < dq; ++i) q[i] = static_cast<float>(a.q_at(b, row, h, i));
  std::fill(acc.begin(), acc.end(), 0.0f);
  float m = -INFINITY, l = 0.0f;
  float l_lse = 0.0f;  // l with the diagonal block's rounded P replaced by the unrounded 2^x
  bool exact = false;  // l_lse is the unrounded sum
  const int64_t n_keys = row + 1;
  for (int64_t k0 = 0; k0 < n_keys; k0 += o.tile_keys) {
    const int64_t k1 = std::min(n_keys, k0 + o.tile_keys);
    float tile_max = -INFINITY;
    for (int64_t j = k0; j < k1; ++j) {
      t[j - k0] = dot(q.data(), &kv.k[j * dq], dq) * qk_factor;
      tile_max = std::max(tile_max, t[j - k0]);
    }
    if (m == -INFINITY || tile_max - m > threshold) {
      const float alpha = m == -INFINITY ? 0.0f : std::exp2(m - tile_max);
      for (float& x : acc) x *= alpha;
      l *= alpha;
      m = tile_max;
    }
    for (int64_t s0 = k0; s0 < k1; s0 += o.scale_block_keys) {
      const int64_t s1 = std::min(k1, s0 + o.scale_block_keys);
      float xmax = -INFINITY;
      for (int64_t j = s0; j < s1; ++j) xmax = std::max(xmax, t[j - k0] - m);
      int k = 0;
      if (fp8 && o.block_scaling && xmax < 0.0f) {
        k = static_cast<int>(std::floor(-xmax));  // xmax + k in (-1, 0]
      }
      if (fp8 && o.block_scaling) k += o.block_lift;
      const float up = static_cast<float>(k);
      float block_sum = 0.0f, raw_sum = 0.0f;
      for (int64_t j = s0; j < s1; ++j) {
        const float x = t[j - k0] - m;
        float pj;
        if (fp8) {
          const uint8_t code = o.p_mode == PMode::LEAN ? lean_p_code(x + up, lean_bias) : exact_p_code(x + up);
          pj = numerics::e4m3_to_float(code);
        } else {
          pj = numerics::bf16_to_float(numerics::float_to_bf16(std::exp2(x)));
        }
        p[j - s0] = pj;
        block_sum += pj;
        raw_sum += std::exp2(x);
      }
      // The P.V product of the block in fp32, scaled back by 2^-k (exact).
      const float down = std::ldexp(1.0f, -k);
      for (int64_t i = 0; i < dv; ++i) {
        float s = 0.0f;
        for (int64_t j = s0; j < s1; ++j) s += p[j - s0] * kv.v[j * dv + i];
        acc[i] += s * down;
      }
      const float l_before = l;
      l += o.denominator == Denominator::ROUNDED_P ? block_sum * down : raw_sum;
      // the diagonal block is the row's last: l is final from here but for this block
      const bool diag = row < o.lse_exact_rows && s1 == n_keys;
      l_lse = diag ? l_before + raw_sum : l;
      exact = diag;
    }
  }
  const int64_t S = c.seqlen;
  for (int64_t i = 0; i < dv; ++i) {
    res.out[a.out_offset(b, row, h, i)] = numerics::float_to_bf16(acc[i] / l * vd);
  }
  if (c.lse) {
    res.lse[(b * c.heads + h) * S + row] =
        static_cast<float>(0.6931471805599453 * (static_cast<double>(m) + std::log2(l_lse)) + (exact ? 0.0 : o.lse_offset));
  }
}

}  // namespace

ModelResult run_kernel_model(const test::AttnData& a, const KernelModelOptions& o) {
  const auto& c = a.cfg;
  const int64_t B = c.batch, S = c.seqlen, H = c.heads, Hk = c.heads_k;
  const int64_t dq = c.d_qk, dv = c.d_v, group = H / Hk;
  const float threshold =
      o.rescale_threshold >= 0 ? o.rescale_threshold : kernel_rescale_threshold(c.dtype, dq);
  ModelResult res;
  res.out.assign(a.out_count(), test::kPoisonBf16);
  res.lse.assign(a.lse_count(), 0.0f);

  std::vector<Decoded> kv(B * Hk);
  test::parallel_for(B * Hk, [&](int64_t bh) {
    const int64_t b = bh / Hk, hk = bh % Hk;
    kv[bh].k.resize(S * dq);
    kv[bh].v.resize(S * dv);
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t i = 0; i < dq; ++i) kv[bh].k[s * dq + i] = static_cast<float>(a.k_at(b, s, hk, i));
      for (int64_t i = 0; i < dv; ++i) kv[bh].v[s * dv + i] = static_cast<float>(a.v_at(b, s, hk, i));
    }
  });

  // Work items of 16 rows, longest (last) rows first so that threads finish together.
  constexpr int64_t kRows = 16;
  const int64_t chunks = (S + kRows - 1) / kRows;
  test::parallel_for(B * H * chunks, [&](int64_t item) {
    const int64_t chunk = chunks - 1 - item / (B * H);
    const int64_t bh = item % (B * H), b = bh / H, h = bh % H;
    const int64_t kvi = b * Hk + h / group;
    const float qk_factor = static_cast<float>(
        static_cast<double>(a.softmax_scale()) * 1.4426950408889634 * a.q_descale[kvi] *
        a.k_descale[kvi]);
    const float vd = a.v_descale[kvi];
    std::vector<float> q(dq), t(o.tile_keys), p(o.scale_block_keys), acc(dv);
    for (int64_t row = chunk * kRows; row < std::min(S, (chunk + 1) * kRows); ++row) {
      run_row(a, o, kv[kvi], b, h, row, qk_factor, vd, threshold, q, t, p, acc, res);
    }
  });
  return res;
}

}  // namespace zyfa::model
