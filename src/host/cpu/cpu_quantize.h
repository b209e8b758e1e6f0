// zyfa_fp8_quantize on host memory.
#pragma once

#include "host/problem.h"

namespace zyfa::cpu {

void fp8_quantize(const QuantizeProblem& p);

}  // namespace zyfa::cpu
