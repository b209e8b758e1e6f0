#include "support/rotation_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

uint16_t to_bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint64_t splitmix(uint64_t* s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double e4m3_value(uint8_t code) {
  const int e = (code >> 3) & 0xF, m = code & 7;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return (code & 0x80) ? -mag : mag;
}

// Half the e4m3 rounding step at |v| (subnormal step 2^-9 below 2^-6).
double half_step(double v) {
  const double a = std::fabs(v);
  if (a < std::ldexp(1.0, -6)) return std::ldexp(1.0, -10);
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(a))) - 4);
}

// y = (x - mean) R for every row, in fp64.
std::vector<double> rotated_fp64(const RotCase& c, const RotInputs& in, std::vector<double>* row_norm) {
  const int64_t d = c.head_dim, rows = c.batch * c.seqlen * c.heads;
  std::vector<double> R(static_cast<size_t>(d * d));
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      R[i * d + j] = c.rotation == ZYFA_ROTATION_NONE ? (i == j) : reference_rotation(c.rotation, d, in.rotation_seed, i, j);
  std::vector<double> y(static_cast<size_t>(rows * d), 0.0), x(static_cast<size_t>(d));
  row_norm->assign(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r % c.heads;
    for (int64_t i = 0; i < d; ++i) {
      x[i] = in.x[r * d + i] - (c.smooth ? in.mean[h * d + i] : 0.0);
      (*row_norm)[r] += x[i] * x[i];
    }
    (*row_norm)[r] = std::sqrt((*row_norm)[r]);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) y[r * d + j] += x[i] * R[i * d + j];
  }
  return y;
}

}  // namespace

std::string RotCase::name() const {
  std::string n = dtype == ZYFA_DTYPE_FP32 ? "F32" : "Bf16";
  n += "_D" + std::to_string(head_dim);
  n += rotation == ZYFA_ROTATION_NONE ? "_NoRot" : rotation == ZYFA_ROTATION_HADAMARD ? "_Hadamard" : "_Dct3H64";
  if (smooth) n += "_Smooth";
  if (static_scale) n += "_Static";
  if (count) n += "_Count";
  n += peaked ? "_Peaked" : "_Std01";
  if (bhsd) n += "_Bhsd";
  return n;
}

double reference_rotation(zyfa_rotation_t kind, int64_t d, uint64_t seed, int64_t i, int64_t j) {
  uint64_t state = seed, word = 0;
  for (int64_t w = 0; w <= i / 64; ++w) word = splitmix(&state);
  const double s = ((word >> (i % 64)) & 1) ? -1.0 : 1.0;
  auto had = [](int64_t a, int64_t b) { return __builtin_popcountll(static_cast<uint64_t>(a & b)) & 1 ? -1.0 : 1.0; };
  if (kind == ZYFA_ROTATION_HADAMARD) return s * had(i, j) / std::sqrt(double(d));
  const int64_t a = i / 64, cc = j / 64;
  const double alpha = cc == 0 ? std::sqrt(1.0 / 3) : std::sqrt(2.0 / 3);
  double dct = alpha * std::cos(M_PI * double(2 * a + 1) * double(cc) / 6.0);
  if (std::fabs(dct) < 1e-12) dct = 0.0;
  return s * dct * had(i % 64, j % 64) / 8.0;
}

RotInputs make_rot_inputs(const RotCase& c) {
  RotInputs in;
  std::mt19937_64 rng(c.seed);
  in.rotation_seed = rng();
  const int64_t d = c.head_dim, n = c.batch * c.seqlen * c.heads * d;
  std::normal_distribution<double> nd(0.0, 1.0);
  const double sd = c.peaked ? 1.0 : 0.1;
  // Outlier channels: a few channels 10-30x larger, the same ones in every row of a head.
  std::vector<double> gain(static_cast<size_t>(c.heads * d), 1.0);
  if (c.peaked)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int k = 0; k < 4; ++k) gain[h * d + static_cast<int64_t>(rng() % d)] = 10.0 + 20.0 * double(rng() % 1000) / 1000.0;
  std::vector<double> offset(static_cast<size_t>(c.heads * d));
  for (double& o : offset) o = c.peaked ? 0.5 * nd(rng) : 0.0;  // a per-channel mean (what smoothing removes)
  in.x.resize(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    const int64_t hd = e % (c.heads * d);
    const int64_t s = (e / (c.heads * d)) % c.seqlen;
    double v = sd * nd(rng) * gain[hd] + offset[hd] * gain[hd];
    if (c.peaked) v *= 1.0 + double(s) / double(c.seqlen);  // maxima rising along the sequence
    in.x[e] = static_cast<float>(v);
  }
  if (c.dtype == ZYFA_DTYPE_BF16) {
    in.bf16.resize(in.x.size());
    for (size_t i = 0; i < in.x.size(); ++i) {
      in.bf16[i] = to_bf16_rne(in.x[i]);
      in.x[i] = from_bf16(in.bf16[i]);
    }
  }
  if (c.smooth) {
    in.mean.resize(static_cast<size_t>(c.heads * d));
    for (int64_t hd = 0; hd < c.heads * d; ++hd) in.mean[hd] = static_cast<float>(offset[hd] * gain[hd] + 0.01 * nd(rng));
  }
  if (c.static_scale) {
    // A calibration that saw a bit less than this tensor: the largest values saturate.
    std::vector<double> norms;
    const std::vector<double> y = rotated_fp64(c, in, &norms);
    double amax = 0.0;
    for (double v : y) amax = std::max(amax, std::fabs(v));
    in.static_descale = static_cast<float>(0.8 * amax / 448.0);
  }
  return in;
}

RotMemory host_memory() {
  RotMemory m;
  m.alloc = [](size_t n) { return static_cast<void*>(new uint8_t[n]); };
  m.to_backend = [](void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); };
  m.to_host = [](void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); };
  m.release = [](void* p) { delete[] static_cast<uint8_t*>(p); };
  return m;
}

RotResult run_rot_quantize(zyfa_backend_t backend, const RotCase& c, const RotInputs& in, const RotMemory& mem) {
  RotResult r;
  const size_t n = in.x.size();
  const size_t src_bytes = c.dtype == ZYFA_DTYPE_BF16 ? n * 2 : n * 4;
  r.codes.assign(n, 0x7F);
  std::memcpy(&r.descale, &kPoisonF32, 4);
  r.saturated = 0xFFFFFFFFu;
  // Physical position of logical element e: itself (bshd), or its (b, h, s, d) slot.
  const int64_t D = c.head_dim, H = c.heads, S = c.seqlen;
  auto phys = [&](size_t e) -> size_t {
    if (!c.bhsd) return e;
    const int64_t i = int64_t(e) % D, h = int64_t(e) / D % H, s = int64_t(e) / (D * H) % S, b = int64_t(e) / (D * H * S);
    return size_t(((b * H + h) * S + s) * D + i);
  };
  const size_t eb = c.dtype == ZYFA_DTYPE_BF16 ? 2 : 4;
  std::vector<uint8_t> src_host(src_bytes);
  for (size_t e = 0; e < n; ++e)
    std::memcpy(&src_host[phys(e) * eb], c.dtype == ZYFA_DTYPE_BF16 ? static_cast<const void*>(&in.bf16[e]) : &in.x[e], eb);
  void* src = mem.alloc(src_bytes);
  void* dst = mem.alloc(n);
  void* scal = mem.alloc(8);  // descale, counter
  void* mean = c.smooth ? mem.alloc(in.mean.size() * 4) : nullptr;
  mem.to_backend(src, src_host.data(), src_bytes);
  mem.to_backend(dst, r.codes.data(), n);
  const uint32_t poison[2] = {kPoisonF32, 0xFFFFFFFFu};
  mem.to_backend(scal, poison, 8);
  if (mean) mem.to_backend(mean, in.mean.data(), in.mean.size() * 4);

  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) == ZYFA_STATUS_SUCCESS) {
    zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
    auto layout = c.bhsd ? zyfa_tensor_bhsd : zyfa_tensor_bshd;
    d.src = layout(src, c.dtype, c.batch, c.seqlen, c.heads, c.head_dim);
    d.dst = layout(dst, ZYFA_DTYPE_FP8_E4M3, c.batch, c.seqlen, c.heads, c.head_dim);
    d.descale = static_cast<float*>(scal);
    d.backend = backend;
    d.rotation = c.rotation;
    d.rotation_seed = in.rotation_seed;
    d.smooth_mean = static_cast<const float*>(mean);
    d.static_descale = in.static_descale;
    d.saturated = c.count ? static_cast<uint32_t*>(scal) + 1 : nullptr;
    r.status = zyfa_fp8_quantize(h, &d);
    r.error = zyfa_last_error();
    zyfa_destroy(h);
  }
  std::vector<uint8_t> codes(n);
  mem.to_host(codes.data(), dst, n);
  for (size_t e = 0; e < n; ++e) r.codes[e] = codes[phys(e)];
  uint32_t back[2];
  mem.to_host(back, scal, 8);
  std::memcpy(&r.descale, &back[0], 4);
  r.saturated = back[1];
  for (void* p : {src, dst, scal, mean})
    if (p) mem.release(p);
  return r;
}

std::string compare_rot_results(const RotResult& got, const RotResult& want) {
  if (std::memcmp(&got.descale, &want.descale, sizeof got.descale) != 0)
    return "descale " + std::to_string(got.descale) + ", expected " + std::to_string(want.descale);
  if (got.saturated != want.saturated)
    return "saturated " + std::to_string(got.saturated) + ", expected " + std::to_string(want.saturated);
  if (got.codes.size() != want.codes.size()) return "a different number of codes";
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < want.codes.size(); ++i)
    if (got.codes[i] != want.codes[i] && differ++ == 0) first = i;
  if (differ != 0) return std::to_string(differ) + " codes differ, the first at " + std::to_string(first);
  return "";
}

std::string check_rot_result(const RotCase& c, const RotInputs& in, const RotResult& r) {
  char buf[512];
  if (r.status != ZYFA_STATUS_SUCCESS) return "status " + std::to_string(int(r.status)) + ": " + r.error;
  std::vector<double> norms;
  const std::vector<double> y = rotated_fp64(c, in, &norms);
  const int64_t d = c.head_dim;
  const double log2d = std::log2(double(d));
  double amax = 0.0;
  for (double v : y) amax = std::max(amax, std::fabs(v));
  const double ds = r.descale;
  if (!(ds > 0.0) || !std::isfinite(ds)) return "descale not a positive finite value: " + std::to_string(ds);
  if (c.static_scale) {
    if (r.descale != in.static_descale) return "descale is not the static descale";
  } else {
    int e;
    if (std::frexp(ds, &e) != 0.5) return "descale not a power of two";
    if (amax / 448.0 > ds * (1 + 1e-5) || ds > 2.0 * amax / 448.0 * (1 + 1e-5)) {
      std::snprintf(buf, sizeof buf, "descale %g not 2^ceil(log2(amax/448)) for amax %g", ds, amax);
      return buf;
    }
  }
  const double inv = c.static_scale ? double(1.0f / in.static_descale) : 1.0 / ds;
  int64_t lo = 0, hi = 0, bad = 0;
  std::string first;
  for (size_t i = 0; i < y.size(); ++i) {
    const uint8_t code = r.codes[i];
    if ((code & 0x7F) == 0x7F) {
      if (++bad == 1) first = "element " + std::to_string(i) + " unwritten or NaN";
      continue;
    }
    // The float32 transform's error: log2(d) + 2 roundings, each at most 2^-24 of a partial
    // sum no larger than the row's norm (all R entries at most 1 in magnitude, |y_j| <= ||x||).
    const double slack = (log2d + 3) * std::ldexp(norms[i / d], -23) * inv;
    double want = y[i] * inv;
    if (std::fabs(want) > 448.0 * (1 - 1e-5) - slack) ++hi;
    if (std::fabs(want) > 448.0 * (1 + 1e-5) + slack) ++lo;
    if (c.static_scale) want = std::clamp(want, -448.0, 448.0);
    const double got = e4m3_value(code);
    if (std::fabs(got - want) > half_step(want) + slack) {
      if (++bad == 1) {
        std::snprintf(buf, sizeof buf, "element %zu (row %lld col %lld): code 0x%02x = %g, fp64 %g (bound %g)", i,
                      (long long)(i / d), (long long)(i % d), code, got, want, half_step(want) + slack);
        first = buf;
      }
    }
  }
  if (bad) return std::to_string(bad) + " bad elements; first: " + first;
  if (c.count) {
    const int64_t s = r.saturated;
    if (!c.static_scale && s != 0) return "saturated = " + std::to_string(s) + " with a computed descale";
    if (c.static_scale && (s < lo || s > hi))
      return "saturated = " + std::to_string(s) + ", expected in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (c.static_scale && hi == 0) return "the case saturates nothing: the counter is not exercised";
  } else if (r.saturated != 0xFFFFFFFFu) {
    return "the counter was written though not asked for";
  }
  return "";
}

E2eErrors e2e_rotation_errors(zyfa_backend_t qb, const E2eCase& c) {
  E2eErrors out;
  const int64_t S = c.seqlen, H = c.heads, D = c.d_qk, DV = 128;
  std::mt19937_64 rng(c.seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  const zyfa_rotation_t rot = D == 192 ? ZYFA_ROTATION_DCT3_HADAMARD64 : ZYFA_ROTATION_HADAMARD;
  const uint64_t rot_seed = rng();
  std::vector<double> gain(size_t(H * D), 1.0), kmean(size_t(H * D));
  for (int64_t h = 0; h < H; ++h)
    for (int k = 0; k < 4; ++k) gain[h * D + int64_t(rng() % D)] = 10.0 + 20.0 * double(rng() % 1000) / 1000.0;
  for (size_t i = 0; i < kmean.size(); ++i) kmean[i] = c.bulk_std * gain[i] * nd(rng);
  std::vector<uint16_t> q(size_t(S * H * D)), k(q.size()), v(size_t(S * H * DV));
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t hd = i % size_t(H * D);
    q[i] = to_bf16_rne(float(c.bulk_std * gain[hd] * nd(rng)));
    k[i] = to_bf16_rne(float(c.bulk_std * gain[hd] * nd(rng) + kmean[hd]));
  }
  for (uint16_t& x : v) x = to_bf16_rne(float(nd(rng)));
  std::vector<float> mean(kmean.begin(), kmean.end());

  // fp64 causal attention of the BF16 inputs.
  const double scale = 1.0 / std::sqrt(double(D));
  std::vector<double> ref(size_t(S * H * DV));
  std::vector<double> p(static_cast<size_t>(S));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < S; ++i) {
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < D; ++t) dot += double(from_bf16(q[(i * H + h) * D + t])) * from_bf16(k[(j * H + h) * D + t]);
        p[j] = dot * scale;
        m = std::max(m, p[j]);
      }
      for (int64_t j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - m));
      for (int64_t t = 0; t < DV; ++t) {
        double o = 0;
        for (int64_t j = 0; j <= i; ++j) o += p[j] * from_bf16(v[(j * H + h) * DV + t]);
        ref[(i * H + h) * DV + t] = o / sum;
      }
    }

  zyfa_handle_t handle = nullptr;
  if (zyfa_create(&handle) != ZYFA_STATUS_SUCCESS) {
    out.error = "zyfa_create failed";
    return out;
  }
  // Quantizes with host-memory buffers (cpu and emu backends).
  auto quantize = [&](std::vector<uint16_t>& src, int64_t d, zyfa_rotation_t r, const float* m, std::vector<uint8_t>* dst,
                      float* descale) {
    dst->assign(src.size(), 0x7F);
    zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
    qd.src = zyfa_tensor_bshd(src.data(), ZYFA_DTYPE_BF16, 1, S, H, d);
    qd.dst = zyfa_tensor_bshd(dst->data(), ZYFA_DTYPE_FP8_E4M3, 1, S, H, d);
    qd.descale = descale;
    qd.backend = qb;
    qd.rotation = r;
    qd.rotation_seed = rot_seed;
    qd.smooth_mean = m;
    const zyfa_status_t st = zyfa_fp8_quantize(handle, &qd);
    if (st != ZYFA_STATUS_SUCCESS && out.error.empty()) out.error = std::string("quantize: ") + zyfa_last_error();
  };
  auto run = [&](bool rotate, bool smooth) -> double {
    std::vector<uint8_t> q8, k8, v8;
    float dq = 0, dk = 0, dv = 0;
    quantize(q, D, rotate ? rot : ZYFA_ROTATION_NONE, nullptr, &q8, &dq);
    quantize(k, D, rotate ? rot : ZYFA_ROTATION_NONE, smooth ? mean.data() : nullptr, &k8, &dk);
    quantize(v, DV, ZYFA_ROTATION_NONE, nullptr, &v8, &dv);
    std::vector<uint16_t> o(size_t(S * H * DV), kPoisonBf16);
    zyfa_fwd_desc_t fd = ZYFA_FWD_DESC_INIT;
    fd.q = zyfa_tensor_bshd(q8.data(), ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
    fd.k = zyfa_tensor_bshd(k8.data(), ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
    fd.v = zyfa_tensor_bshd(v8.data(), ZYFA_DTYPE_FP8_E4M3, 1, S, H, DV);
    fd.out = zyfa_tensor_bshd(o.data(), ZYFA_DTYPE_BF16, 1, S, H, DV);
    fd.q_descale = zyfa_descale_host(dq);
    fd.k_descale = zyfa_descale_host(dk);
    fd.v_descale = zyfa_descale_host(dv);
    fd.backend = ZYFA_BACKEND_CPU;
    if (zyfa_fwd(handle, &fd) != ZYFA_STATUS_SUCCESS && out.error.empty()) out.error = std::string("fwd: ") + zyfa_last_error();
    double num = 0, den = 0;
    for (size_t i = 0; i < o.size(); ++i) {
      const double got = from_bf16(o[i]);
      if (!std::isfinite(got)) return INFINITY;  // NaN or unwritten never passes
      num += (got - ref[i]) * (got - ref[i]);
      den += ref[i] * ref[i];
    }
    return std::sqrt(num / den);
  };
  out.plain = run(false, false);
  out.rotated = run(true, false);
  out.rotated_smoothed = run(true, true);
  zyfa_destroy(handle);
  return out;
}

std::string nonfinite_rows_vs_cpu(zyfa_backend_t backend, bool static_descale, const RotMemory& mem) {
  RotCase c = RotCase::of(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, static_descale, true, true, 1, 40, 2);
  c.seed = seed_for(std::string("nonfinite_") + (static_descale ? "static" : "computed"));
  std::printf("%s with NaN and infinite rows, seed %llu\n", c.name().c_str(), (unsigned long long)c.seed);
  RotInputs in = make_rot_inputs(c);
  const auto put = [&](int64_t row, int64_t col, uint16_t bits) { in.bf16[size_t(row * c.head_dim + col)] = bits; };
  put(3, 17, 0x7FC0);                       // NaN
  put(10, 5, 0x7F80);                       // +inf
  put(50, 0, 0x7F80), put(50, 99, 0xFF80);  // +inf and -inf
  const RotResult cpu = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  if (cpu.status != ZYFA_STATUS_SUCCESS) return "cpu: " + cpu.error;
  if (cpu.codes[3 * 128 + 7] != 0x7F) return "cpu: the NaN row does not give NaN codes";
  const RotResult got = run_rot_quantize(backend, c, in, mem);
  if (got.status != ZYFA_STATUS_SUCCESS) return got.error;
  uint32_t want_bits, got_bits;
  std::memcpy(&want_bits, &cpu.descale, 4);
  std::memcpy(&got_bits, &got.descale, 4);
  if (got_bits != want_bits) return "descale bits differ from the cpu backend's";
  if (got.saturated != cpu.saturated)
    return "saturation count " + std::to_string(got.saturated) + ", cpu " + std::to_string(cpu.saturated);
  for (size_t i = 0; i < cpu.codes.size(); ++i)
    if (got.codes[i] != cpu.codes[i])
      return "code " + std::to_string(i) + " is " + std::to_string(got.codes[i]) + ", cpu " + std::to_string(cpu.codes[i]);
  return "";
}

}  // namespace zyfa::test
