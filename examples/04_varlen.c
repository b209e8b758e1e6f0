/* Varlen batch in C: three prefill requests of different lengths packed into one call, as an
 * inference engine batches them, one of them a chunk of 64 new tokens after a cached prefix of
 * 136 (its queries see the whole prefix: the causal mask is aligned bottom-right). BF16 with
 * grouped-query heads on the cpu backend, checked against a direct fp64 computation, LSE too.
 * Build: see examples/CMakeLists.txt. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/example_util.h"
#include "zyfa/zyfa.h"

enum { N = 3, H = 4, HK = 2, D = 128 };

/* New tokens (queries) and all tokens (keys: cached prefix + new) of each request. */
static const int32_t kLenQ[N] = {37, 150, 64};
static const int32_t kLenK[N] = {37, 150, 200};

int main(void) {
  int32_t cu_q[N + 1] = {0}, cu_k[N + 1] = {0};
  int b, h, s, t, c, max_q = 0, max_k = 0;
  for (b = 0; b < N; ++b) {
    cu_q[b + 1] = cu_q[b] + kLenQ[b];
    cu_k[b + 1] = cu_k[b] + kLenK[b];
    if (kLenQ[b] > max_q) max_q = kLenQ[b];
    if (kLenK[b] > max_k) max_k = kLenK[b];
  }
  const size_t nq = (size_t)cu_q[N] * H * D, nkv = (size_t)cu_k[N] * HK * D;
  uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2), *out = malloc(nq * 2);
  float* lse = malloc((size_t)H * cu_q[N] * sizeof(float));
  double* w = malloc((size_t)max_k * sizeof(double));
  unsigned seed = 20261201u;
  double err2 = 0, ref2 = 0, lse_err = 0;
  zyfa_handle_t handle;
  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  zyfa_status_t st;

  example_qkv_bf16(q, nq, k, v, nkv, &seed);

  if (zyfa_create(&handle) != ZYFA_STATUS_SUCCESS) return 1;
  /* Packed tensors: batch 1, the rows of all requests one after another. */
  desc.q = zyfa_tensor_bshd(q, ZYFA_DTYPE_BF16, 1, cu_q[N], H, D);
  desc.k = zyfa_tensor_bshd(k, ZYFA_DTYPE_BF16, 1, cu_k[N], HK, D);
  desc.v = zyfa_tensor_bshd(v, ZYFA_DTYPE_BF16, 1, cu_k[N], HK, D);
  desc.out = zyfa_tensor_bshd(out, ZYFA_DTYPE_BF16, 1, cu_q[N], H, D);
  desc.lse = lse; /* (H, total_q) */
  desc.cu_seqlens_q = cu_q;
  desc.cu_seqlens_k = cu_k;
  desc.varlen_batch = N;
  desc.max_seqlen_q = max_q;
  desc.max_seqlen_k = max_k;
  desc.backend = ZYFA_BACKEND_CPU;
  st = zyfa_fwd(handle, &desc);
  if (st != ZYFA_STATUS_SUCCESS) {
    fprintf(stderr, "zyfa_fwd: %s: %s\n", zyfa_status_string(st), zyfa_last_error());
    return 1;
  }

  /* Direct fp64 attention per request: query s sees keys t <= s + Lk - Lq. */
  for (b = 0; b < N; ++b) {
    const int shift = kLenK[b] - kLenQ[b];
    for (h = 0; h < H; ++h) {
      const int hk = h / (H / HK);
      for (s = 0; s < kLenQ[b]; ++s) {
        const size_t qrow = (size_t)(cu_q[b] + s);
        double mx = -1e300, sum = 0;
        for (t = 0; t <= s + shift; ++t) {
          const size_t krow = (size_t)(cu_k[b] + t);
          double dot = 0;
          for (c = 0; c < D; ++c)
            dot += (double)bf16_to_float(q[(qrow * H + h) * D + c]) * bf16_to_float(k[(krow * HK + hk) * D + c]);
          w[t] = dot / sqrt((double)D);
          if (w[t] > mx) mx = w[t];
        }
        for (t = 0; t <= s + shift; ++t) sum += (w[t] = exp(w[t] - mx));
        lse_err = fmax(lse_err, fabs(lse[(size_t)h * cu_q[N] + qrow] - (mx + log(sum))));
        for (c = 0; c < D; ++c) {
          double ref = 0, got = bf16_to_float(out[(qrow * H + h) * D + c]);
          for (t = 0; t <= s + shift; ++t)
            ref += w[t] / sum * bf16_to_float(v[(((size_t)cu_k[b] + t) * HK + hk) * D + c]);
          err2 += (got - ref) * (got - ref);
          ref2 += ref * ref;
        }
      }
    }
  }
  printf("zyfa %s varlen: %d requests (q %d/%d/%d, k %d/%d/%d) BF16 H=%d H_k=%d d=%d on cpu: "
         "relative RMS error %.3e, max LSE error %.2e\n",
         zyfa_version_string(), N, kLenQ[0], kLenQ[1], kLenQ[2], kLenK[0], kLenK[1], kLenK[2], H, HK, D,
         sqrt(err2 / ref2), lse_err);
  zyfa_destroy(handle);
  free(q); free(k); free(v); free(out); free(lse); free(w);
  return sqrt(err2 / ref2) < 1e-2 && lse_err < 1e-4 ? 0 : 2;
}
