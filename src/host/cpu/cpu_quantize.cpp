// descale = 2^ceil(log2(amax / 448)) (numerics::pow2_descale), dst = RNE(src / descale).
// No saturation is needed: descale >= amax / 448 gives |src / descale| <= 448, the division
// by a power of two is exact in double, and RNE never rounds a magnitude <= 448 above 448
// because 448 itself is an e4m3 value. A non-finite input makes the descale NaN, and then
// every code is NaN too (x / NaN), so no output looks valid.
// With smoothing, a rotation or a static descale, rows go through the float32 path below.
#include "host/cpu/cpu_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"

namespace zyfa::cpu {
namespace {

template <typename F>
void for_each_element(const QuantizeProblem& p, F&& f) {
  for (int64_t a = 0; a < p.shape[0]; ++a)
    for (int64_t b = 0; b < p.shape[1]; ++b)
      for (int64_t c = 0; c < p.shape[2]; ++c)
        for (int64_t d = 0; d < p.shape[3]; ++d) f(a, b, c, d);
}

double load(const QuantizeProblem& p, int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t off = a * p.src.stride[0] + b * p.src.stride[1] + c * p.src.stride[2] + d;
  if (p.src_dtype == ZYFA_DTYPE_BF16) {
    return numerics::bf16_to_float(static_cast<const uint16_t*>(p.src.data)[off]);
  }
  return static_cast<const float*>(p.src.data)[off];
}

// Row (a, b, c) as float32 after smoothing and rotation, in the order every backend follows
// (kernels/rotation/fp8_rotation.h). bf16 -> float and the sign flips are exact.
void transformed_row(const QuantizeProblem& p, int64_t a, int64_t b, int64_t c, float* x) {
  const int d = static_cast<int>(p.shape[3]);
  for (int i = 0; i < d; ++i) {
    x[i] = static_cast<float>(load(p, a, b, c, i));
    if (p.smooth_mean != nullptr) x[i] = x[i] - p.smooth_mean[c * d + i];
  }
  rotation::transform_row(x, d, p.rotation, [](float u, float v, float w) { return std::fma(u, v, w); });
}

// The float32 row path (any option set): amax of the transformed rows (or the static descale),
// then code = RNE(y * inv) with inv = 1/descale (exact for the power-of-two descale, the
// host-rounded reciprocal for a static one). A static descale saturates |y * inv| > 448 to
// +-448 and counts it; NaN stays NaN (the comparison is false for it).
void fp8_quantize_transformed(const QuantizeProblem& p) {
  std::vector<float> row(static_cast<size_t>(p.shape[3]));
  float descale = p.static_descale;
  if (descale == 0.0f) {
    uint32_t amax_bits = 0;  // as the GPU kernels: max of |y| bit patterns, NaN/inf on top
    for (int64_t a = 0; a < p.shape[0]; ++a)
      for (int64_t b = 0; b < p.shape[1]; ++b)
        for (int64_t c = 0; c < p.shape[2]; ++c) {
          transformed_row(p, a, b, c, row.data());
          for (float y : row) {
            uint32_t bits;
            std::memcpy(&bits, &y, 4);
            amax_bits = std::max(amax_bits, bits & 0x7FFFFFFFu);
          }
        }
    float amax;
    std::memcpy(&amax, &amax_bits, 4);
    descale = std::isfinite(amax) ? numerics::pow2_descale(amax) : std::nanf("");
  }
  const float inv = p.static_descale != 0.0f ? p.static_inv : 1.0f / descale;
  const bool saturate = p.static_descale != 0.0f;
  uint32_t saturated = 0;
  uint8_t* dst = static_cast<uint8_t*>(p.dst.data);
  for (int64_t a = 0; a < p.shape[0]; ++a)
    for (int64_t b = 0; b < p.shape[1]; ++b)
      for (int64_t c = 0; c < p.shape[2]; ++c) {
        transformed_row(p, a, b, c, row.data());
        uint8_t* out = dst + a * p.dst.stride[0] + b * p.dst.stride[1] + c * p.dst.stride[2];
        for (int64_t i = 0; i < p.shape[3]; ++i) {
          float v = row[i] * inv;
          if (saturate && std::fabs(v) > 448.0f) {
            v = std::copysign(448.0f, v);
            ++saturated;
          }
          // RNE from the float, one rounding; every NaN gives 0x7F, whatever its sign bit
          out[i] = std::isnan(v) ? numerics::kE4m3NaN : numerics::float_to_e4m3(v);
        }
      }
  *p.descale = descale;
  if (p.saturated != nullptr) *p.saturated = saturated;
}

}  // namespace

void fp8_quantize(const QuantizeProblem& p) {
  if (p.transformed()) {
    fp8_quantize_transformed(p);
    return;
  }
  double amax = 0.0;
  bool finite = true;
  for_each_element(p, [&](int64_t a, int64_t b, int64_t c, int64_t d) {
    const double x = load(p, a, b, c, d);
    if (!std::isfinite(x)) finite = false;
    else amax = std::max(amax, std::fabs(x));
  });
  const float descale = finite ? numerics::pow2_descale(amax) : std::nanf("");
  const double ds = descale;
  uint8_t* dst = static_cast<uint8_t*>(p.dst.data);
  for_each_element(p, [&](int64_t a, int64_t b, int64_t c, int64_t d) {
    const int64_t off = a * p.dst.stride[0] + b * p.dst.stride[1] + c * p.dst.stride[2] + d;
    dst[off] = numerics::double_to_e4m3(load(p, a, b, c, d) / ds, false).code;
  });
  *p.descale = descale;
}

}  // namespace zyfa::cpu
