// Validation of the public descriptors: every rule, before any work, with a status and a
// message that names the field and its value. Produces the normalized problem on success.
#pragma once

#include "host/problem.h"

namespace zyfa {

// The problem's backend field is left for the caller, which resolves AUTO after validation.
zyfa_status_t validate_fwd(const zyfa_fwd_desc_t* desc, FwdProblem* out);
// The varlen prefix sums of a validated problem whose memory is host memory (cpu, emu): the
// GPU kernels read them on the device only. SUCCESS for fixed lengths.
zyfa_status_t validate_fwd_lengths(const FwdProblem& p);
zyfa_status_t validate_quantize(const zyfa_quantize_desc_t* desc, QuantizeProblem* out);

// The alignment rules of a concrete backend's attention kernels, as zyfa_backend_alignment()
// reports them. The backends enforce them where they launch (host/amd/attn_launch.cpp,
// host/cuda/tensor_maps.cpp); tests/host/test_alignment.cpp holds the two together.
zyfa_alignment_t backend_alignment(zyfa_backend_t concrete);

}  // namespace zyfa
