#include "host/rotation_matrix.h"

#include <cmath>
#include <vector>

#include "host/error.h"
#include "kernels/rotation/fp8_rotation.h"

namespace zyfa {
namespace {

// Sylvester H[i][j] = (-1)^popcount(i & j).
double sylvester(int64_t i, int64_t j) { return __builtin_popcountll(static_cast<uint64_t>(i & j)) % 2 ? -1.0 : 1.0; }

// Orthonormal DCT-II, C[c][a] = alpha_c cos(pi (2a + 1) c / 6); C[1][1] is exactly 0.
double dct3(int c, int a) {
  if (c == 1 && a == 1) return 0.0;
  const double alpha = c == 0 ? std::sqrt(1.0 / 3.0) : std::sqrt(2.0 / 3.0);
  return alpha * std::cos(M_PI * (2 * a + 1) * c / 6.0);
}

}  // namespace

double rotation_entry(zyfa_rotation_t kind, int64_t d, uint64_t seed, int64_t i, int64_t j) {
  const rotation::Params p = rotation::make_params(kind, static_cast<int>(d), seed);
  const double s = rotation::negated(p, static_cast<int>(i)) ? -1.0 : 1.0;
  if (kind == ZYFA_ROTATION_HADAMARD) return s * sylvester(i, j) / std::sqrt(static_cast<double>(d));
  // i = 64a + b, j = 64c + e: R = diag(s) (C3^T kron H64) / 8.
  return s * dct3(static_cast<int>(j / 64), static_cast<int>(i / 64)) * sylvester(i % 64, j % 64) / 8.0;
}

zyfa_status_t rotation_matrix(zyfa_rotation_t kind, int64_t d, uint64_t seed, float* out) {
  if (out == nullptr) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "out is NULL");
  switch (kind) {
    case ZYFA_ROTATION_HADAMARD:
      if (d < 32 || d > rotation::kMaxDim || (d & (d - 1)) != 0)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "head_dim = {}: ZYFA_ROTATION_HADAMARD takes a power of two from 32 to {}", d,
                    rotation::kMaxDim);
      break;
    case ZYFA_ROTATION_DCT3_HADAMARD64:
      if (d != 192)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "head_dim = {}: ZYFA_ROTATION_DCT3_HADAMARD64 takes 192", d);
      break;
    default:
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "rotation = {}: not a rotation (NONE has no matrix)",
                  static_cast<int>(kind));
  }
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) out[i * d + j] = static_cast<float>(rotation_entry(kind, d, seed, i, j));
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa
