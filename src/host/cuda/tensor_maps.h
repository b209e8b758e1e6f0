// Tensor maps (TMA descriptors) of q, k and v for the Hopper kernels.
#pragma once

#include <cuda.h>

#include "host/problem.h"

namespace zyfa::cuda {

// NOT_SUPPORTED with a message naming the field when the bulk tensor copy cannot address the
// tensors (16-byte aligned base addresses and strides), or the output cannot be written with
// 4-byte stores.
zyfa_status_t check_tensor_maps_supported(const FwdProblem& p);

// Row length of the FP8 vᵀ workspace (fwd_launch.h): seqlen_k padded to a key block, or for
// varlen every sequence's key groups (varlen::group_columns). Its bytes: that times 128 d
// times heads_k times the maps' batch (1 for varlen).
int64_t fwd_vt_columns(const FwdProblem& p);
size_t fwd_vt_bytes(const FwdProblem& p);

// Encodes the three maps; the problem must have passed check_tensor_maps_supported. For FP8
// inputs the v map reads vt, the pre-pass output ([batch][heads_k][128][fwd_vt_seqlen_pad]).
zyfa_status_t encode_fwd_tensor_maps(const FwdProblem& p, const void* vt, CUtensorMap* q, CUtensorMap* k,
                                     CUtensorMap* v);

}  // namespace zyfa::cuda
