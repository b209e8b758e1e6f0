// Validated, normalized forms of the public descriptors that every backend receives.
// Validation (validate.cpp) is the only producer; backends never re-check user input.
#pragma once

#include <cstdint>

#include "kernels/rotation/fp8_rotation.h"
#include "zyfa/zyfa.h"

namespace zyfa {

// A descale after validation: kind NONE is folded into HOST with value 1.
struct Descale {
  zyfa_descale_kind_t kind = ZYFA_DESCALE_HOST;  // HOST or DEVICE only
  float value = 1.0f;
  const float* ptr = nullptr;
  int64_t stride_batch = 0;
  int64_t stride_head_k = 0;
};

// A strided view with the logical order (batch, seqlen, heads, head_dim).
struct View {
  void* data = nullptr;
  int64_t stride[4] = {0, 0, 0, 1};  // elements; stride[3] == 1 always
};

struct FwdProblem {
  zyfa_backend_t backend = ZYFA_BACKEND_CPU;  // concrete, never AUTO
  zyfa_dtype_t in_dtype = ZYFA_DTYPE_BF16;    // BF16 or FP8_E4M3; out is always BF16
  int64_t batch = 0;    // sequences (varlen: varlen_batch)
  int64_t seqlen = 0;   // queries per sequence (varlen: max_seqlen_q)
  int64_t seqlen_k = 0;  // keys per sequence, >= seqlen when fixed (varlen: max_seqlen_k)
  int64_t heads = 0;    // query heads
  int64_t heads_k = 0;  // KV heads; heads % heads_k == 0
  int64_t d_qk = 0;     // 128 or 192
  int64_t d_v = 0;      // 128
  View q, k, v, out;
  float* lse = nullptr;  // (batch, heads, seqlen) contiguous (varlen: (heads, total_q)), or null
  // Varlen: batch + 1 prefix sums each in the backend's memory; sequence b holds rows
  // cu_seqlens_q[b] .. cu_seqlens_q[b+1] of q/out (the batch stride of the views is unused) and
  // sees keys bottom-right aligned. Null for fixed lengths.
  const int32_t* cu_seqlens_q = nullptr;
  const int32_t* cu_seqlens_k = nullptr;
  int64_t total_q = 0, total_k = 0;  // varlen: rows of the packed q/out and k/v tensors
  bool varlen() const { return cu_seqlens_q != nullptr; }
  float softmax_scale = 0.0f;  // resolved: never 0
  Descale q_descale, k_descale, v_descale;
  void* stream = nullptr;
};

struct QuantizeProblem {
  zyfa_backend_t backend = ZYFA_BACKEND_CPU;
  zyfa_dtype_t src_dtype = ZYFA_DTYPE_BF16;  // BF16 or FP32
  int64_t shape[4] = {0, 0, 0, 0};
  View src, dst;
  float* descale = nullptr;
  void* stream = nullptr;
  // The row transform (kernels/rotation/fp8_rotation.h); kind kNone when no rotation.
  rotation::Params rotation{};
  const float* smooth_mean = nullptr;  // (heads, head_dim) contiguous, or null
  float static_descale = 0.0f;         // 0: computed from the data
  float static_inv = 0.0f;             // fp32(1 / static_descale), rounded once on the host
  uint32_t* saturated = nullptr;       // or null
  // Any option set: the float32 row path instead of the plain convert.
  bool transformed() const {
    return rotation.kind != rotation::kNone || smooth_mean != nullptr || static_descale != 0.0f ||
           saturated != nullptr;
  }
};

}  // namespace zyfa
