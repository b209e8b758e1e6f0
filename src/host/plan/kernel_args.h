// The conversions from a validated problem to kernel arguments that every GPU backend shares,
// so that hip, emu and cuda hand their kernels the same bits.
#pragma once

#include <cmath>
#include <cstdint>

#include "host/problem.h"

namespace zyfa::plan {

// softmax_scale * log2(e), the factor that takes scores to base 2 in one multiply: computed in
// double and rounded once to float.
inline float scale_log2(float softmax_scale) {
  return static_cast<float>(static_cast<double>(softmax_scale) * M_LOG2E);
}

// A descale as every kernel reads it: a device pointer with element strides over
// (batch, head_k), or no pointer (0 strides) and a host value (1 for BF16).
struct DescaleArg {
  const float* ptr = nullptr;
  float value = 1.0f;
  int64_t stride_batch = 0;
  int64_t stride_head_k = 0;
};

inline DescaleArg descale_arg(const Descale& d) {
  DescaleArg a;
  if (d.kind == ZYFA_DESCALE_DEVICE) {
    a.ptr = d.ptr;
    a.stride_batch = d.stride_batch;
    a.stride_head_k = d.stride_head_k;
  } else {
    a.value = d.value;
  }
  return a;
}

// Fills the descale fields both argument structs (kernels::AttnFwdArgs, cuda::FwdKernelArgs)
// name alike: {q,k,v}_descale_ptr, {q,k,v}_descale and descale_stride[6] (q, k, v; each
// batch then head_k). `to_ptr` converts a pointer to the struct's pointer type.
template <class Args, class ToPtr>
void set_descales(const FwdProblem& p, Args* a, ToPtr to_ptr) {
  const DescaleArg q = descale_arg(p.q_descale), k = descale_arg(p.k_descale), v = descale_arg(p.v_descale);
  a->q_descale_ptr = to_ptr(q.ptr);
  a->k_descale_ptr = to_ptr(k.ptr);
  a->v_descale_ptr = to_ptr(v.ptr);
  a->q_descale = q.value;
  a->k_descale = k.value;
  a->v_descale = v.value;
  const DescaleArg* all[3] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i) {
    a->descale_stride[2 * i] = all[i]->stride_batch;
    a->descale_stride[2 * i + 1] = all[i]->stride_head_k;
  }
}

}  // namespace zyfa::plan
