// Validation of the public descriptors: every rule, before any work, with a status and a
// message that names the field and its value. Produces the normalized problem on success.
#pragma once

#include "host/problem.h"

namespace zyfa {

// The problem's backend field is left for the caller, which resolves AUTO after validation.
zyfa_status_t validate_fwd(const zyfa_fwd_desc_t* desc, FwdProblem* out);
zyfa_status_t validate_quantize(const zyfa_quantize_desc_t* desc, QuantizeProblem* out);

}  // namespace zyfa
