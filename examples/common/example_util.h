/* Small helpers shared by the C examples: BF16 conversion and Gaussian inputs. Deliberately
 * simple; the test suite has the real reference. */
#ifndef ZYFA_EXAMPLE_UTIL_H
#define ZYFA_EXAMPLE_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline uint16_t float_to_bf16(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline double gaussian(unsigned* state) { /* Box-Muller over a small LCG */
  double u1, u2;
  *state = *state * 1664525u + 1013904223u;
  u1 = ((*state >> 8) + 1.0) / 16777217.0;
  *state = *state * 1664525u + 1013904223u;
  u2 = (*state >> 8) / 16777216.0;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* n BF16 values of a normal distribution of standard deviation std. */
static inline void gaussian_bf16(uint16_t* dst, size_t n, double std, unsigned* state) {
  size_t i;
  for (i = 0; i < n; ++i) dst[i] = float_to_bf16((float)(std * gaussian(state)));
}

/* The examples' attention inputs: q and k of std 0.5 (a softmax neither flat nor one-hot), v of
 * std 1; nq and nkv values. */
static inline void example_qkv_bf16(uint16_t* q, size_t nq, uint16_t* k, uint16_t* v, size_t nkv, unsigned* state) {
  gaussian_bf16(q, nq, 0.5, state);
  gaussian_bf16(k, nkv, 0.5, state);
  gaussian_bf16(v, nkv, 1.0, state);
}

#endif
