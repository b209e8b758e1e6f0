// descale = 2^ceil(log2(amax / 448)) (numerics::pow2_descale), dst = RNE(src / descale).
// No saturation is needed: descale >= amax / 448 gives |src / descale| <= 448, the division
// by a power of two is exact in double, and RNE never rounds a magnitude <= 448 above 448
// because 448 itself is an e4m3 value. A non-finite input makes the descale NaN, and then
// every code is NaN too (x / NaN), so no output looks valid.
#include "host/cpu/cpu_quantize.h"

#include <cmath>

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

}  // namespace

void fp8_quantize(const QuantizeProblem& p) {
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
