/* Quickstart in C: causal BF16 attention with grouped-query heads on the cpu backend, checked
 * against a direct fp64 computation. Build: see examples/CMakeLists.txt. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/example_util.h"
#include "zyfa/zyfa.h"

enum { B = 1, S = 200, H = 8, HK = 2, D = 128 };

int main(void) {
  const size_t nq = (size_t)B * S * H * D, nkv = (size_t)B * S * HK * D;
  uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2), *out = malloc(nq * 2);
  unsigned seed = 20261129u;
  int s, h, t, c;
  double err2 = 0, ref2 = 0;
  zyfa_handle_t handle;
  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  zyfa_status_t st;

  example_qkv_bf16(q, nq, k, v, nkv, &seed);

  if (zyfa_create(&handle) != ZYFA_STATUS_SUCCESS) return 1;
  desc.q = zyfa_tensor_bshd(q, ZYFA_DTYPE_BF16, B, S, H, D);
  desc.k = zyfa_tensor_bshd(k, ZYFA_DTYPE_BF16, B, S, HK, D);
  desc.v = zyfa_tensor_bshd(v, ZYFA_DTYPE_BF16, B, S, HK, D);
  desc.out = zyfa_tensor_bshd(out, ZYFA_DTYPE_BF16, B, S, H, D);
  desc.backend = ZYFA_BACKEND_CPU;
  st = zyfa_fwd(handle, &desc);
  if (st != ZYFA_STATUS_SUCCESS) {
    fprintf(stderr, "zyfa_fwd: %s: %s\n", zyfa_status_string(st), zyfa_last_error());
    return 1;
  }

  /* Direct fp64 attention for comparison. */
  for (h = 0; h < H; ++h) {
    const int hk = h / (H / HK);
    for (s = 0; s < S; ++s) {
      double w[S], mx = -1e300, sum = 0;
      for (t = 0; t <= s; ++t) {
        double dot = 0;
        for (c = 0; c < D; ++c)
          dot += (double)bf16_to_float(q[((size_t)s * H + h) * D + c]) * bf16_to_float(k[((size_t)t * HK + hk) * D + c]);
        w[t] = dot / sqrt((double)D);
        if (w[t] > mx) mx = w[t];
      }
      for (t = 0; t <= s; ++t) sum += (w[t] = exp(w[t] - mx));
      for (c = 0; c < D; ++c) {
        double ref = 0, got = bf16_to_float(out[((size_t)s * H + h) * D + c]);
        for (t = 0; t <= s; ++t) ref += w[t] / sum * bf16_to_float(v[((size_t)t * HK + hk) * D + c]);
        err2 += (got - ref) * (got - ref);
        ref2 += ref * ref;
      }
    }
  }
  printf("zyfa %s quickstart: BF16 B=%d S=%d H=%d H_k=%d d=%d on cpu: relative RMS error %.3e\n",
         zyfa_version_string(), B, S, H, HK, D, sqrt(err2 / ref2));
  zyfa_destroy(handle);
  free(q); free(k); free(v); free(out);
  return sqrt(err2 / ref2) < 1e-2 ? 0 : 2;
}
