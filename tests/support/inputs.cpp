// Seeded input generators and their placement in BSHD / BHSD / packed-QKV buffers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

using Values = std::vector<double>;  // logical (b, s, h, i) order

// Four channels (two RoPE pairs of the lowest frequencies) of q and k carry large values,
// as the outlier channels of real q/k projections do.
constexpr int kOutlierPairs = 2;
constexpr double kOutlierGain = 6.0;

struct HeadStats {
  std::vector<double> scale;  // per channel
  std::vector<double> mean;   // per channel
};

// Rotates pairs (i, i + n/2) of the last n channels by pos * 10000^(-2i/n).
void apply_rope(double* x, int64_t d, int64_t n, int64_t pos) {
  const int64_t base = d - n, half = n / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(n));
    const double c = std::cos(pos * theta), s = std::sin(pos * theta);
    double& a = x[base + i];
    double& b = x[base + i + half];
    const double a0 = a, b0 = b;
    a = a0 * c - b0 * s;
    b = a0 * s + b0 * c;
  }
}

HeadStats realistic_stats(std::mt19937_64& rng, int64_t d, bool outliers, double mean_gain) {
  std::normal_distribution<double> n01(0.0, 1.0);
  HeadStats st{std::vector<double>(d), std::vector<double>(d)};
  for (int64_t i = 0; i < d; ++i) {
    st.scale[i] = std::exp(0.6 * n01(rng));  // log-normal channel scales: heavy tail
    st.mean[i] = mean_gain * st.scale[i] * n01(rng);
  }
  if (outliers) {
    // RoPE pairs (i, i + half) of the lowest frequencies: the highest i of the rotated part.
    const int64_t n = d == 192 ? 64 : d, half = n / 2, base = d - n;
    for (int p = 0; p < kOutlierPairs; ++p) {
      for (int64_t c : {base + half - 1 - p, base + n - 1 - p}) {
        // A fixed gain (not log-normal) keeps the spread of scores similar from seed to seed.
        st.scale[c] = kOutlierGain;
        st.mean[c] = mean_gain * kOutlierGain * n01(rng);
      }
    }
  }
  return st;
}

struct Generated {
  Values q, k, v;
};

Generated generate(const AttnConfig& c) {
  std::mt19937_64 rng(c.seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  const int64_t B = c.batch, S = c.seqlen, H = c.heads, Hk = c.heads_k;
  Generated g{Values(B * S * H * c.d_qk), Values(B * S * Hk * c.d_qk), Values(B * S * Hk * c.d_v)};
  if (c.inputs == Inputs::GAUSSIAN || c.inputs == Inputs::RISING) {
    for (auto* t : {&g.q, &g.k, &g.v}) {
      for (double& x : *t) x = c.std * n01(rng);
    }
    if (c.inputs == Inputs::RISING) {
      // Channel 0: q holds 1, key s holds a ramp, so score(i, s) gains (S - 1 - s) / 32 binades
      // (at the default softmax scale 1/sqrt(d_qk)).
      const double per_key = std::log(2.0) / 32.0 * std::sqrt(static_cast<double>(c.d_qk));
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t s = 0; s < S; ++s) {
          for (int64_t h = 0; h < H; ++h) g.q[((b * S + s) * H + h) * c.d_qk] = 1.0;
          for (int64_t h = 0; h < Hk; ++h) {
            g.k[((b * S + s) * Hk + h) * c.d_qk] = per_key * static_cast<double>(S - 1 - s);
          }
        }
      }
    }
    return g;
  }
  // REALISTIC: per KV head, q and k share outlier channels and carry a common mean, so scores
  // spread over many nats; RoPE rotates every position; token 0's key is aligned with the
  // mean query direction (an attention sink).
  const int64_t dq = c.d_qk, dv = c.d_v, group = H / Hk;
  const int64_t rope_n = dq == 192 ? 64 : dq;
  std::vector<double> row(std::max(dq, dv));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t hk = 0; hk < Hk; ++hk) {
      const HeadStats qs = realistic_stats(rng, dq, true, 0.5);
      const HeadStats ks = realistic_stats(rng, dq, true, 0.3);
      const HeadStats vs = realistic_stats(rng, dv, false, 0.2);
      // Sink direction: the mean query, rotated with the query by RoPE it is not, so the sink
      // is added after rotation (a non-rotating component, like a bias).
      double qmean_norm = 0;
      for (double m : qs.mean) qmean_norm += m * m;
      qmean_norm = std::sqrt(qmean_norm);
      const double sink_nats = 14.0;
      const double sink_gain = sink_nats * std::sqrt(static_cast<double>(dq)) / qmean_norm;
      for (int64_t s = 0; s < S; ++s) {
        for (int64_t hq = hk * group; hq < (hk + 1) * group; ++hq) {
          double* x = &g.q[((b * S + s) * H + hq) * dq];
          for (int64_t i = 0; i < dq; ++i) x[i] = qs.mean[i] + qs.scale[i] * n01(rng);
          apply_rope(x, dq, rope_n, s);
        }
        double* kx = &g.k[((b * S + s) * Hk + hk) * dq];
        for (int64_t i = 0; i < dq; ++i) kx[i] = ks.mean[i] + ks.scale[i] * n01(rng);
        apply_rope(kx, dq, rope_n, s);
        if (s == 0) {
          for (int64_t i = 0; i < dq; ++i) kx[i] += sink_gain * qs.mean[i] / qmean_norm;
        }
        double* vx = &g.v[((b * S + s) * Hk + hk) * dv];
        for (int64_t i = 0; i < dv; ++i) vx[i] = vs.mean[i] + vs.scale[i] * n01(rng);
      }
    }
  }
  return g;
}

// Strides of a (B, S, heads, d) tensor in the configuration's layout; for PACKED_QKV the row
// holds heads_total * d elements.
void layout_strides(Layout l, int64_t S, int64_t heads, int64_t d, int64_t packed_row,
                    int64_t st[4]) {
  switch (l) {
    case Layout::BSHD:
      st[0] = S * heads * d; st[1] = heads * d; st[2] = d; st[3] = 1;
      break;
    case Layout::BHSD:
      st[0] = heads * S * d; st[1] = d; st[2] = S * d; st[3] = 1;
      break;
    case Layout::PACKED_QKV:
      st[0] = S * packed_row; st[1] = packed_row; st[2] = d; st[3] = 1;
      break;
  }
}

int64_t extent(const int64_t shape[4], const int64_t st[4]) {
  int64_t e = 1;
  for (int i = 0; i < 4; ++i) e += (shape[i] - 1) * st[i];
  return e;
}

// Encodes values (logical order, shape (B,S,heads,d)) into `buf` at element offset `base`.
// FP8: x / descale of its (batch, head_k) entry, RNE, never saturating (|x|/descale <= 448).
void encode(const AttnConfig& c, const Values& vals, int64_t heads, int64_t d,
            const std::vector<float>& descale, const int64_t st[4], int64_t base,
            std::vector<uint8_t>& buf) {
  const int64_t per_kv = heads == c.heads ? c.heads / c.heads_k : 1;
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t s = 0; s < c.seqlen; ++s) {
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t i = 0; i < d; ++i) {
          const double x = vals[((b * c.seqlen + s) * heads + h) * d + i];
          const int64_t off = base + b * st[0] + s * st[1] + h * st[2] + i;
          if (c.dtype == ZYFA_DTYPE_BF16) {
            const uint16_t bits = numerics::double_to_bf16(x);
            std::memcpy(&buf[off * 2], &bits, 2);
          } else {
            const float ds = descale[b * c.heads_k + h / per_kv];
            buf[off] = numerics::double_to_e4m3(x / ds, false).code;
          }
        }
      }
    }
  }
}

// Power-of-two descales per (batch, head_k) entry: of the whole tensor, or of each group.
std::vector<float> descales_for(const AttnConfig& c, const Values& vals, int64_t heads,
                                int64_t d) {
  std::vector<float> ds(c.batch * c.heads_k, 1.0f);
  if (c.dtype != ZYFA_DTYPE_FP8_E4M3) return ds;
  const int64_t per_kv = heads == c.heads ? c.heads / c.heads_k : 1;
  std::vector<double> amax(c.batch * c.heads_k, 0.0);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t s = 0; s < c.seqlen; ++s) {
      for (int64_t h = 0; h < heads; ++h) {
        double& a = amax[b * c.heads_k + h / per_kv];
        for (int64_t i = 0; i < d; ++i) {
          a = std::max(a, std::fabs(vals[((b * c.seqlen + s) * heads + h) * d + i]));
        }
      }
    }
  }
  if (c.descale != DescaleMode::DEVICE_PER_HEAD) {
    const double all = *std::max_element(amax.begin(), amax.end());
    std::fill(amax.begin(), amax.end(), all);
  }
  for (size_t i = 0; i < ds.size(); ++i) ds[i] = numerics::pow2_descale(amax[i]);
  return ds;
}

}  // namespace

AttnData make_attn_data(const AttnConfig& c) {
  if (c.batch < 1 || c.seqlen < 1 || c.heads < 1 || c.heads_k < 1 || c.heads % c.heads_k) {
    throw std::invalid_argument("make_attn_data: bad shape in " + c.name());
  }
  if (c.layout == Layout::PACKED_QKV && c.d_qk != c.d_v) {
    throw std::invalid_argument("make_attn_data: PACKED_QKV needs d_qk == d_v");
  }
  AttnData a;
  a.cfg = c;
  const Generated g = generate(c);
  a.q_descale = descales_for(c, g.q, c.heads, c.d_qk);
  a.k_descale = descales_for(c, g.k, c.heads_k, c.d_qk);
  a.v_descale = descales_for(c, g.v, c.heads_k, c.d_v);

  const int64_t eb = static_cast<int64_t>(a.elem_bytes());
  const int64_t row = (c.heads + 2 * c.heads_k) * c.d_qk;
  layout_strides(c.layout, c.seqlen, c.heads, c.d_qk, row, a.q_stride);
  layout_strides(c.layout, c.seqlen, c.heads_k, c.d_qk, row, a.k_stride);
  layout_strides(c.layout, c.seqlen, c.heads_k, c.d_v, row, a.v_stride);
  layout_strides(c.layout == Layout::BHSD ? Layout::BHSD : Layout::BSHD, c.seqlen, c.heads,
                 c.d_v, 0, a.out_stride);
  const int64_t qs[4] = {c.batch, c.seqlen, c.heads, c.d_qk};
  const int64_t ks[4] = {c.batch, c.seqlen, c.heads_k, c.d_qk};
  const int64_t vs[4] = {c.batch, c.seqlen, c.heads_k, c.d_v};
  if (c.layout == Layout::PACKED_QKV) {
    std::vector<uint8_t> packed(c.batch * c.seqlen * row * eb);
    const int64_t k_off = c.heads * c.d_qk, v_off = (c.heads + c.heads_k) * c.d_qk;
    encode(c, g.q, c.heads, c.d_qk, a.q_descale, a.q_stride, 0, packed);
    encode(c, g.k, c.heads_k, c.d_qk, a.k_descale, a.k_stride, k_off, packed);
    encode(c, g.v, c.heads_k, c.d_v, a.v_descale, a.v_stride, v_off, packed);
    auto slice = [&](int64_t off, int64_t ext) {
      return std::vector<uint8_t>(packed.begin() + off * eb, packed.begin() + (off + ext) * eb);
    };
    a.q = slice(0, extent(qs, a.q_stride));
    a.k = slice(k_off, extent(ks, a.k_stride));
    a.v = slice(v_off, extent(vs, a.v_stride));
  } else {
    a.q.resize(extent(qs, a.q_stride) * eb);
    a.k.resize(extent(ks, a.k_stride) * eb);
    a.v.resize(extent(vs, a.v_stride) * eb);
    encode(c, g.q, c.heads, c.d_qk, a.q_descale, a.q_stride, 0, a.q);
    encode(c, g.k, c.heads_k, c.d_qk, a.k_descale, a.k_stride, 0, a.k);
    encode(c, g.v, c.heads_k, c.d_v, a.v_descale, a.v_stride, 0, a.v);
  }

  if (c.dtype == ZYFA_DTYPE_FP8_E4M3 && c.descale != DescaleMode::HOST) {
    const size_t blk = a.descale_block();
    a.dev_descales.assign(3 * blk, 0.0f);
    if (c.descale == DescaleMode::DEVICE_SCALAR) {
      a.dev_descales = {a.q_descale[0], a.k_descale[0], a.v_descale[0]};
    } else {
      // Transposed (head_k-major) so that a kernel mixing up the two strides reads wrong values.
      a.descale_stride_batch = 1;
      a.descale_stride_head_k = c.batch;
      const std::vector<float>* src[3] = {&a.q_descale, &a.k_descale, &a.v_descale};
      for (int t = 0; t < 3; ++t) {
        for (int64_t b = 0; b < c.batch; ++b) {
          for (int64_t hk = 0; hk < c.heads_k; ++hk) {
            a.dev_descales[t * blk + b * a.descale_stride_batch + hk * a.descale_stride_head_k] =
                (*src[t])[b * c.heads_k + hk];
          }
        }
      }
    }
  }
  return a;
}

size_t AttnData::out_count() const {
  return static_cast<size_t>(cfg.batch * cfg.seqlen * cfg.heads * cfg.d_v);
}

size_t AttnData::lse_count() const {
  return cfg.lse ? static_cast<size_t>(cfg.batch * cfg.heads * cfg.seqlen) : 0;
}

size_t AttnData::descale_block() const {
  if (cfg.dtype != ZYFA_DTYPE_FP8_E4M3) return 0;
  switch (cfg.descale) {
    case DescaleMode::HOST: return 0;
    case DescaleMode::DEVICE_SCALAR: return 1;
    case DescaleMode::DEVICE_PER_HEAD: return static_cast<size_t>(cfg.batch * cfg.heads_k);
  }
  return 0;
}

float AttnData::softmax_scale() const {
  return cfg.softmax_scale != 0.0f
             ? cfg.softmax_scale
             : static_cast<float>(1.0 / std::sqrt(static_cast<double>(cfg.d_qk)));
}

static zyfa_tensor_t make_tensor(void* p, zyfa_dtype_t dt, int64_t b, int64_t s, int64_t h,
                                 int64_t d, const int64_t st[4]) {
  zyfa_tensor_t t;
  t.data = p;
  t.dtype = dt;
  t.shape[0] = b; t.shape[1] = s; t.shape[2] = h; t.shape[3] = d;
  for (int i = 0; i < 4; ++i) t.stride[i] = st[i];
  return t;
}

zyfa_fwd_desc_t AttnData::desc(void* qp, void* kp, void* vp, void* outp, float* lsep,
                               const float* dev) const {
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  const auto& c = cfg;
  d.q = make_tensor(qp, c.dtype, c.batch, c.seqlen, c.heads, c.d_qk, q_stride);
  d.k = make_tensor(kp, c.dtype, c.batch, c.seqlen, c.heads_k, c.d_qk, k_stride);
  d.v = make_tensor(vp, c.dtype, c.batch, c.seqlen, c.heads_k, c.d_v, v_stride);
  d.out = make_tensor(outp, ZYFA_DTYPE_BF16, c.batch, c.seqlen, c.heads, c.d_v, out_stride);
  d.lse = c.lse ? lsep : nullptr;
  d.softmax_scale = c.softmax_scale;
  if (c.dtype == ZYFA_DTYPE_FP8_E4M3) {
    zyfa_descale_t* out[3] = {&d.q_descale, &d.k_descale, &d.v_descale};
    const std::vector<float>* host[3] = {&q_descale, &k_descale, &v_descale};
    const size_t blk = descale_block();
    for (int t = 0; t < 3; ++t) {
      if (c.descale == DescaleMode::HOST) {
        *out[t] = zyfa_descale_host((*host[t])[0]);
      } else {
        *out[t] = zyfa_descale_device(dev + t * blk);
        out[t]->stride_batch = descale_stride_batch;
        out[t]->stride_head_k = descale_stride_head_k;
      }
    }
  }
  d.backend = ZYFA_BACKEND_AUTO;
  return d;
}

zyfa_fwd_desc_t AttnData::host_desc(void* outp, float* lsep) {
  return desc(q.data(), k.data(), v.data(), outp, lsep, dev_descales.data());
}

// Decoding written from the format definitions, apart from src/host/numerics, so that the
// reference does not share a decoder with the backends it judges.
static double decode_at(const AttnData& a, const std::vector<uint8_t>& buf, int64_t off) {
  if (a.cfg.dtype == ZYFA_DTYPE_BF16) {
    uint16_t bits;
    std::memcpy(&bits, &buf[off * 2], 2);
    const uint32_t f32 = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    return f;
  }
  const uint8_t c = buf[off];
  const double sign = (c & 0x80) ? -1.0 : 1.0;
  const int e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return std::nan("");
  return sign * (e == 0 ? (m / 8.0) * std::pow(2.0, -6) : (1.0 + m / 8.0) * std::pow(2.0, e - 7));
}

double AttnData::q_at(int64_t b, int64_t s, int64_t h, int64_t i) const {
  return decode_at(*this, q, b * q_stride[0] + s * q_stride[1] + h * q_stride[2] + i);
}
double AttnData::k_at(int64_t b, int64_t s, int64_t h, int64_t i) const {
  return decode_at(*this, k, b * k_stride[0] + s * k_stride[1] + h * k_stride[2] + i);
}
double AttnData::v_at(int64_t b, int64_t s, int64_t h, int64_t i) const {
  return decode_at(*this, v, b * v_stride[0] + s * v_stride[1] + h * v_stride[2] + i);
}
int64_t AttnData::out_offset(int64_t b, int64_t s, int64_t h, int64_t i) const {
  return b * out_stride[0] + s * out_stride[1] + h * out_stride[2] + i;
}

}  // namespace zyfa::test
