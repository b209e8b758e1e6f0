// Accuracy of a benchmarked output on sampled rows against an fp64 reference computed on the
// host from the very inputs (decoded FP8 codes times descales, or BF16 values) the kernels read.
#pragma once

#include <cstdint>

namespace zyfa::bench {

struct SampledInputs {
  const void *q, *k, *v;   // device, bshd contiguous
  const float* descales;   // device [q, k, v] (FP8 only)
  bool fp8;
  int64_t batch, seqlen, heads, heads_k, d_qk, d_v;
};

struct SampledError {
  double rel_rms = -1.0;  // ||o - r|| / ||r|| over the sampled rows
  double max_abs = -1.0;  // max |o - r|
};

// Rows: 48 per sampled head (first, last, and spread between), heads 0, H/2 and H-1 of batch 0.
// out_fp8: the output is e4m3 codes (cuDNN's FP8 output with scale 1) instead of BF16.
SampledError sampled_error(const SampledInputs& in, const void* out, bool out_fp8);

}  // namespace zyfa::bench
