/* FP8 attention on inputs with outlier channels (as post-RoPE q and k have), in C: q and k are
 * quantized with the fused random-sign Hadamard rotation (and k smoothed by a fixed per-head
 * mean), then attended in FP8 on the cpu backend. The same call without the options shows what
 * the rotation saves; zyfa_rotation_matrix checks one rotated row on the host. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/example_util.h"
#include "zyfa/zyfa.h"

enum { S = 256, H = 2, D = 128 };

static double e4m3_to_double(uint8_t c) {
  const int e = (c >> 3) & 15, m = c & 7;
  const double mag = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
  return (c & 0x80) ? -mag : mag;
}

#define CHECK(call)                                                                    \
  do {                                                                                 \
    if ((call) != ZYFA_STATUS_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s\n", #call, zyfa_last_error());                    \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static zyfa_handle_t handle;
static uint16_t q[S * H * D], k[S * H * D], v[S * H * D], out[S * H * D];
static uint8_t q8[S * H * D], k8[S * H * D], v8[S * H * D];
static float kmean[H * D];
static double ref[S * H * D];

/* Quantizes src (bf16) to dst; returns the descale. */
static float quantize(uint16_t* src, uint8_t* dst, zyfa_rotation_t rotation, const float* mean) {
  float descale = 0.0f;
  zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
  qd.src = zyfa_tensor_bshd(src, ZYFA_DTYPE_BF16, 1, S, H, D);
  qd.dst = zyfa_tensor_bshd(dst, ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
  qd.descale = &descale;
  qd.backend = ZYFA_BACKEND_CPU;
  qd.rotation = rotation;
  qd.rotation_seed = 0x5EED; /* q and k must use the same seed (the same R) */
  qd.smooth_mean = mean;
  CHECK(zyfa_fp8_quantize(handle, &qd));
  return descale;
}

/* FP8 attention of (q, k, v) quantized with or without the options; rel RMS error vs ref. */
static double fp8_attention_error(int rotate) {
  const zyfa_rotation_t r = rotate ? ZYFA_ROTATION_HADAMARD : ZYFA_ROTATION_NONE;
  zyfa_fwd_desc_t fd = ZYFA_FWD_DESC_INIT;
  double num = 0, den = 0;
  size_t i;
  fd.q_descale = zyfa_descale_host(quantize(q, q8, r, NULL));
  fd.k_descale = zyfa_descale_host(quantize(k, k8, r, rotate ? kmean : NULL));
  fd.v_descale = zyfa_descale_host(quantize(v, v8, ZYFA_ROTATION_NONE, NULL)); /* v is never rotated */
  fd.q = zyfa_tensor_bshd(q8, ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
  fd.k = zyfa_tensor_bshd(k8, ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
  fd.v = zyfa_tensor_bshd(v8, ZYFA_DTYPE_FP8_E4M3, 1, S, H, D);
  fd.out = zyfa_tensor_bshd(out, ZYFA_DTYPE_BF16, 1, S, H, D);
  fd.backend = ZYFA_BACKEND_CPU;
  CHECK(zyfa_fwd(handle, &fd));
  for (i = 0; i < (size_t)S * H * D; ++i) {
    const double d = bf16_to_float(out[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return sqrt(num / den);
}

int main(void) {
  static double p[S];
  static float R[D * D];
  unsigned seed = 20261201u;
  int s, h, t, j, c, outlier[H][4];
  double gain[H * D], plain, rotated, worst = 0;

  for (h = 0; h < H; ++h) /* four outlier channels per head, 10-30x the others */
    for (c = 0; c < 4; ++c) outlier[h][c] = (int)(gaussian(&seed) * 1e6) & (D - 1);
  for (h = 0; h < H; ++h)
    for (t = 0; t < D; ++t) {
      gain[h * D + t] = 0.3;
      for (c = 0; c < 4; ++c)
        if (outlier[h][c] == t) gain[h * D + t] = 0.3 * (10.0 + 5.0 * (c + fabs(gaussian(&seed))));
      kmean[h * D + t] = (float)(gain[h * D + t] * gaussian(&seed)); /* a fixed per-channel key mean */
    }
  for (s = 0; s < S; ++s)
    for (h = 0; h < H; ++h)
      for (t = 0; t < D; ++t) {
        const size_t i = ((size_t)s * H + h) * D + t;
        q[i] = float_to_bf16((float)(gain[h * D + t] * gaussian(&seed)));
        k[i] = float_to_bf16((float)(gain[h * D + t] * gaussian(&seed) + kmean[h * D + t]));
        v[i] = float_to_bf16((float)gaussian(&seed));
      }
  for (h = 0; h < H; ++h) /* fp64 causal attention of the unquantized inputs */
    for (s = 0; s < S; ++s) {
      double m = -INFINITY, sum = 0;
      for (j = 0; j <= s; ++j) {
        double dot = 0;
        for (t = 0; t < D; ++t) dot += (double)bf16_to_float(q[(s * H + h) * D + t]) * bf16_to_float(k[(j * H + h) * D + t]);
        p[j] = dot / sqrt((double)D);
        if (p[j] > m) m = p[j];
      }
      for (j = 0; j <= s; ++j) sum += (p[j] = exp(p[j] - m));
      for (t = 0; t < D; ++t) {
        double o = 0;
        for (j = 0; j <= s; ++j) o += p[j] * bf16_to_float(v[(j * H + h) * D + t]);
        ref[(s * H + h) * D + t] = o / sum;
      }
    }

  CHECK(zyfa_create(&handle));
  plain = fp8_attention_error(0);
  rotated = fp8_attention_error(1);
  printf("FP8 attention, rel RMS error vs fp64 on the BF16 inputs: plain %.4f, rotated + smoothed %.4f (%.2fx)\n",
         plain, rotated, rotated / plain);

  /* The first rotated row of q, decoded, against q's first row times R on the host. */
  CHECK(zyfa_rotation_matrix(ZYFA_ROTATION_HADAMARD, D, 0x5EED, R));
  {
    const float dq = quantize(q, q8, ZYFA_ROTATION_HADAMARD, NULL);
    for (j = 0; j < D; ++j) {
      double y = 0;
      for (t = 0; t < D; ++t) y += (double)bf16_to_float(q[t]) * R[t * D + j];
      if (fabs(e4m3_to_double(q8[j]) * dq - y) > worst) worst = fabs(e4m3_to_double(q8[j]) * dq - y);
    }
    printf("row 0 of q R: largest difference between the FP8 codes and the host product %.4f (descale %g)\n", worst, dq);
  }
  zyfa_destroy(handle);
  return rotated <= 0.6 * plain ? 0 : 1;
}
