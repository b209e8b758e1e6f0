#include "host/cpu/cpu_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"

namespace zyfa::cpu {
namespace {

double descale_of(const Descale& d, int64_t b, int64_t hk) {
  if (d.kind == ZYFA_DESCALE_DEVICE) return d.ptr[b * d.stride_batch + hk * d.stride_head_k];
  return d.value;
}

// Where sequence b lives: the tensor batch index and its first rows and lengths. Fixed
// lengths: batch b, rows from 0. Varlen: batch 0, rows from the prefix sums (validated).
struct Seq {
  int64_t tensor_batch, q0, lq, k0, lk;
};

Seq seq_of(const FwdProblem& p, int64_t b) {
  if (!p.varlen()) return {b, 0, p.seqlen, 0, p.seqlen_k};
  return {0, p.cu_seqlens_q[b], int64_t{p.cu_seqlens_q[b + 1]} - p.cu_seqlens_q[b], p.cu_seqlens_k[b],
          int64_t{p.cu_seqlens_k[b + 1]} - p.cu_seqlens_k[b]};
}

// Decodes `rows` rows of d elements of a (b, ., h, .) slice starting at row s0, times scale.
void load_rows(const FwdProblem& p, const View& v, int64_t b, int64_t h, int64_t s0,
               int64_t rows, int64_t d, double scale, double* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t off = b * v.stride[0] + (s0 + r) * v.stride[1] + h * v.stride[2];
    if (p.in_dtype == ZYFA_DTYPE_BF16) {
      const uint16_t* src = static_cast<const uint16_t*>(v.data) + off;
      for (int64_t i = 0; i < d; ++i) dst[r * d + i] = numerics::bf16_to_float(src[i]) * scale;
    } else {
      const uint8_t* src = static_cast<const uint8_t*>(v.data) + off;
      for (int64_t i = 0; i < d; ++i) dst[r * d + i] = numerics::e4m3_to_float(src[i]) * scale;
    }
  }
}

struct Scratch {
  std::vector<double> q, k, v, acc, m, l, s;
};

// Query tile `tile` of sequence b, head h. The causal mask is aligned bottom-right: query i
// sees keys j <= i + lk - lq; a row that sees none gets zeros and LSE -inf.
void run_tile(const FwdProblem& p, int64_t b, int64_t h, int64_t tile, Scratch& w) {
  const int64_t dq = p.d_qk, dv = p.d_v;
  const Seq sq = seq_of(p, b);
  const int64_t hk = h / (p.heads / p.heads_k);
  const int64_t r0 = tile * kTileRows, rows = std::min(kTileRows, sq.lq - r0);
  if (rows <= 0) return;  // past this sequence's queries (varlen: sized for the longest)
  const int64_t shift = sq.lk - sq.lq, tb = sq.tensor_batch;
  // The softmax scale and both descales fold into the query; products of decoded BF16/FP8
  // values and these factors are exact or within 1 ulp of double.
  const double qscale = static_cast<double>(p.softmax_scale) * descale_of(p.q_descale, b, hk) *
                        descale_of(p.k_descale, b, hk);
  const double vscale = descale_of(p.v_descale, b, hk);
  w.q.resize(kTileRows * dq);
  w.k.resize(kTileRows * dq);
  w.v.resize(kTileRows * dv);
  w.acc.assign(kTileRows * dv, 0.0);
  w.m.assign(kTileRows, -INFINITY);
  w.l.assign(kTileRows, 0.0);
  w.s.resize(kTileRows);
  load_rows(p, p.q, tb, h, sq.q0 + r0, rows, dq, qscale, w.q.data());

  // Key tiles up to and including the one of the last row's last visible key.
  const int64_t key_end = std::min(sq.lk, r0 + rows + shift);
  for (int64_t k0 = 0; k0 < key_end; k0 += kTileRows) {
    const int64_t keys = std::min(kTileRows, key_end - k0);
    load_rows(p, p.k, tb, hk, sq.k0 + k0, keys, dq, 1.0, w.k.data());
    load_rows(p, p.v, tb, hk, sq.k0 + k0, keys, dv, vscale, w.v.data());
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t last = std::min(keys, r0 + r + shift - k0 + 1);  // causal: key <= query + shift
      if (last <= 0) continue;
      const double* q = &w.q[r * dq];
      double mx = w.m[r];
      for (int64_t j = 0; j < last; ++j) {
        const double* k = &w.k[j * dq];
        double dot = 0;
        for (int64_t i = 0; i < dq; ++i) dot += q[i] * k[i];
        w.s[j] = dot;
        mx = std::max(mx, dot);
      }
      double* acc = &w.acc[r * dv];
      if (mx > w.m[r]) {
        const double c = std::exp(w.m[r] - mx);  // exp(-inf) = 0 on the first tile
        w.l[r] *= c;
        for (int64_t i = 0; i < dv; ++i) acc[i] *= c;
        w.m[r] = mx;
      }
      for (int64_t j = 0; j < last; ++j) {
        const double e = std::exp(w.s[j] - mx);
        w.l[r] += e;
        const double* v = &w.v[j * dv];
        for (int64_t i = 0; i < dv; ++i) acc[i] += e * v[i];
      }
    }
  }

  uint16_t* out = static_cast<uint16_t*>(p.out.data);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t s = sq.q0 + r0 + r;
    uint16_t* o = out + tb * p.out.stride[0] + s * p.out.stride[1] + h * p.out.stride[2];
    const bool sees = w.l[r] > 0.0;  // false only for a row with no visible key
    const double inv = sees ? 1.0 / w.l[r] : 0.0;
    for (int64_t i = 0; i < dv; ++i) o[i] = numerics::double_to_bf16(w.acc[r * dv + i] * inv);
    if (p.lse) {
      const int64_t at = p.varlen() ? h * p.total_q + s : (b * p.heads + h) * p.seqlen + s;
      p.lse[at] = sees ? static_cast<float>(w.m[r] + std::log(w.l[r])) : -INFINITY;
    }
  }
}

}  // namespace

void attention_fwd(const FwdProblem& p, unsigned threads) {
  const int64_t tiles = (p.seqlen + kTileRows - 1) / kTileRows;
  const int64_t items = p.batch * p.heads * tiles;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t n_threads = std::min<int64_t>(threads, items);
  // Longest tiles (the last ones of a row) first, so the threads finish together.
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    Scratch w;
    for (int64_t i; (i = next.fetch_add(1)) < items;) {
      const int64_t tile = tiles - 1 - i / (p.batch * p.heads);
      const int64_t bh = i % (p.batch * p.heads);
      run_tile(p, bh / p.heads, bh % p.heads, tile, w);
    }
  };
  if (n_threads <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(n_threads - 1);
  try {
    for (int64_t t = 1; t < n_threads; ++t) pool.emplace_back(worker);
  } catch (const std::system_error&) {
    // Fewer threads than asked for: the ones running (and this one) take all the work.
  }
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace zyfa::cpu
