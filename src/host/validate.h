// Validation of the public descriptors: every rule, before any work, with a status and a
// message that names the field and its value. Produces the normalized problem on success.
#pragma once

#include "host/problem.h"

namespace zyfa {

// `backend` is the concrete backend the call will run on (AUTO already resolved).
zyfa_status_t validate_fwd(const zyfa_fwd_desc_t* desc, zyfa_backend_t backend, FwdProblem* out);
zyfa_status_t validate_quantize(const zyfa_quantize_desc_t* desc, zyfa_backend_t backend,
                                QuantizeProblem* out);

// The descriptor-level checks that come before backend resolution (NULL, struct_size, enum).
zyfa_status_t validate_fwd_header(const zyfa_fwd_desc_t* desc);
zyfa_status_t validate_quantize_header(const zyfa_quantize_desc_t* desc);

}  // namespace zyfa
