// zyfa_rotation_matrix: the exact R of a rotation, for callers and for tests.
#pragma once

#include <cstdint>

#include "zyfa/zyfa.h"

namespace zyfa {

// R[i][j] in double from its definition (docs/api.md, "Rotation"), the same signs as the
// kernels. kind/head_dim must be a pair zyfa_fp8_quantize accepts.
double rotation_entry(zyfa_rotation_t kind, int64_t head_dim, uint64_t seed, int64_t i, int64_t j);

// The checks and the float32 matrix behind zyfa_rotation_matrix().
zyfa_status_t rotation_matrix(zyfa_rotation_t kind, int64_t head_dim, uint64_t seed, float* out);

}  // namespace zyfa
