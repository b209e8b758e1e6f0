// gfx950 conversion semantics. Sources (read, never copied):
//  - CDNA4 per-instruction pseudocode (tinygrad runtime/autogen/amd/cdna/str_pcode.py, extracted
//    from the CDNA4 ISA guide): V_CVT_PK_FP8_F32 / V_CVT_PK_BF8_F32 force round-to-nearest-even,
//    write {f32_to_fp8(S1), f32_to_fp8(S0)} to the 16-bit word chosen by OPSEL[3] and keep the
//    other word; V_CVT_F32_FP8 picks the byte with SDWA src0_sel (or OPSEL in VOP3);
//    V_CVT_PK_F32_FP8 picks the word; V_CVT_SCALEF32_* take `scale = exponent(S.f32)` (the
//    biased exponent field of the f32 scale operand, i.e. an E8M0 byte); V_CVT_PK_BF16_F32
//    forces RNE.
//  - Direction of the scale: AMD's composable_kernel (include/ck/utility/mxf8_utils.hpp) documents
//    the gfx950 builtin as "if fval / scale > max fp8, returns NaN" (bf8: "returns Inf"): the
//    down-conversion divides by the scale, the up-conversion multiplies (OCP MX convention).
//  - Saturation: MODE bit 23 (FP16_OVFL) makes FP8 conversions clamp to the largest finite
//    value; without it overflow gives NaN (e4m3) / infinity (e5m2). Triton's AMD backend sets
//    that MODE bit for kernels with an f32->fp8 cast for exactly this reason, and the gfx9 MODE
//    description says FP16_OVFL clamps overflow "while still preserving true INF values".
//  - Formats: OCP 8-bit floating point (e4m3fn / e5m2) and OCP Microscaling (MX) v1.0 specs.
//  - MODE layout: FP_ROUND [3:0], FP_DENORM [7:4] (bit 4: f32 input denormals allowed, bit 5:
//    f32 output denormals allowed), DX10_CLAMP 8, IEEE 9, FP16_OVFL 23 — as LLVM's AMDHSA
//    kernel descriptor fields (FLOAT_DENORM_MODE_32 -> MODE[5:4]) map into MODE.
#include "emu/semantics/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "emu/core/fp_bits.h"

namespace zyfa::emu {
namespace {

constexpr uint32_t kF32Sign = 0x80000000u;
constexpr uint32_t kF32QuietNan = 0x7FC00000u;

// One OCP minifloat format: `mbits` mantissa bits, smallest normal exponent `emin`, largest
// finite magnitude `maxval`.
struct MiniFormat {
  int ebits;
  int mbits;
  int bias;
  double maxval;
  int emin() const { return 1 - bias; }
};

constexpr MiniFormat kE4M3{4, 3, 7, 448.0};
constexpr MiniFormat kE5M2{5, 2, 15, 57344.0};
constexpr MiniFormat kE2M3{2, 3, 1, 7.5};
constexpr MiniFormat kE3M2{3, 2, 3, 28.0};
constexpr MiniFormat kE2M1{2, 1, 1, 6.0};

// Decodes the magnitude bits of a finite code (no NaN/inf handling here).
double decode_magnitude(uint32_t code, const MiniFormat& f) {
  const uint32_t mant = code & ((1u << f.mbits) - 1u);
  const uint32_t expf = (code >> f.mbits) & ((1u << f.ebits) - 1u);
  if (expf == 0) return std::ldexp(static_cast<double>(mant), f.emin() - f.mbits);
  return std::ldexp(static_cast<double>((1u << f.mbits) | mant),
                    static_cast<int>(expf) - f.bias - f.mbits);
}

// Rounds |a| (finite, a >= 0) to the format's grid with round-to-nearest-even. Returns the
// magnitude code, or sets *overflow when the rounded value exceeds maxval.
uint32_t round_magnitude(double a, const MiniFormat& f, bool* overflow) {
  *overflow = false;
  if (a == 0.0) return 0;
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  e -= 1;
  if (e < f.emin()) e = f.emin();  // subnormal range: fixed quantum
  const double quantum = std::ldexp(1.0, e - f.mbits);
  // a / quantum is exact (power-of-two divisor, no underflow at these magnitudes);
  // nearbyint rounds half to even under the default rounding mode.
  const double units = std::nearbyint(a / quantum);
  const double r = units * quantum;
  if (r > f.maxval) {
    *overflow = true;
    return 0;
  }
  if (r == 0.0) return 0;
  const double min_normal = std::ldexp(1.0, f.emin());
  if (r < min_normal) {
    return static_cast<uint32_t>(r / std::ldexp(1.0, f.emin() - f.mbits));
  }
  int er = 0;
  std::frexp(r, &er);
  er -= 1;
  const uint32_t expf = static_cast<uint32_t>(er + f.bias);
  const uint32_t mant =
      static_cast<uint32_t>(r / std::ldexp(1.0, er - f.mbits)) - (1u << f.mbits);
  return (expf << f.mbits) | mant;
}

uint32_t sign_bit_of(double v) { return std::signbit(v) ? 1u : 0u; }

// Largest finite magnitude code: e4m3 reserves only S.1111.111 (NaN), e5m2 the whole top
// exponent (infinity and NaN), the MX sub-byte formats nothing.
uint32_t max_finite_code(const MiniFormat& f) {
  bool overflow = false;
  return round_magnitude(f.maxval, f, &overflow);
}

uint32_t flush_f32_input(uint32_t bits, uint32_t mode) {
  const bool denormal = (bits & 0x7F800000u) == 0 && (bits & 0x007FFFFFu) != 0;
  if (denormal && (mode & mode::kFp32DenormIn) == 0) return bits & kF32Sign;
  return bits;
}

bool is_f32_nan(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

// Exact (or correctly rounded, RNE) conversion of a double to f32 bits; NaN becomes the
// canonical quiet NaN with the sign kept.
uint32_t f32_bits_from_double(double v) {
  if (std::isnan(v)) return kF32QuietNan | (std::signbit(v) ? kF32Sign : 0u);
  return bits_from_f32(static_cast<float>(v));
}

// The E8M0 scale the scaled conversions use: the biased exponent of the f32 operand.
uint8_t scale_byte_of(uint32_t scale_f32_bits) {
  return static_cast<uint8_t>((scale_f32_bits >> 23) & 0xFFu);
}

uint32_t pack_word(uint32_t old_vdst, bool word_sel_hi, uint32_t lo_byte, uint32_t hi_byte) {
  const uint32_t word = (lo_byte & 0xFFu) | ((hi_byte & 0xFFu) << 8);
  return word_sel_hi ? ((old_vdst & 0x0000FFFFu) | (word << 16))
                     : ((old_vdst & 0xFFFF0000u) | word);
}

uint8_t byte_of(uint32_t src, int byte_sel) {
  return static_cast<uint8_t>((src >> (8 * (byte_sel & 3))) & 0xFFu);
}

uint8_t encode_fp8(double v, bool saturate, bool e4m3) {
  const MiniFormat& f = e4m3 ? kE4M3 : kE5M2;
  const uint32_t sign = sign_bit_of(v) << 7;
  const uint32_t nan_code = 0x7Fu;
  if (std::isnan(v)) return static_cast<uint8_t>(sign | nan_code);
  if (std::isinf(v)) return static_cast<uint8_t>(sign | (e4m3 ? nan_code : 0x7Cu));
  bool overflow = false;
  const uint32_t mag = round_magnitude(std::fabs(v), f, &overflow);
  if (overflow) {
    if (saturate) return static_cast<uint8_t>(sign | max_finite_code(f));
    return static_cast<uint8_t>(sign | (e4m3 ? nan_code : 0x7Cu));
  }
  return static_cast<uint8_t>(sign | mag);
}

uint8_t encode_mx_subbyte(double v, const MiniFormat& f) {
  const uint32_t sign = sign_bit_of(v) << (f.ebits + f.mbits);
  bool overflow = false;
  if (std::isnan(v)) return static_cast<uint8_t>(sign | max_finite_code(f));
  const double a = std::fabs(v);
  const uint32_t mag = std::isinf(a) ? max_finite_code(f) : round_magnitude(a, f, &overflow);
  return static_cast<uint8_t>(sign | (overflow ? max_finite_code(f) : mag));
}

double decode_fp8(uint8_t code, bool e4m3) {
  const double sign = (code & 0x80u) ? -1.0 : 1.0;
  const uint32_t mag = code & 0x7Fu;
  if (e4m3) {
    if (mag == 0x7Fu) return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
    return sign * decode_magnitude(mag, kE4M3);
  }
  if (mag == 0x7Cu) return sign * std::numeric_limits<double>::infinity();
  if (mag > 0x7Cu) return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  return sign * decode_magnitude(mag, kE5M2);
}

double decode_subbyte(uint8_t code, const MiniFormat& f) {
  const uint32_t sign_bit = 1u << (f.ebits + f.mbits);
  const double mag = decode_magnitude(code & (sign_bit - 1u), f);
  return (code & sign_bit) ? -mag : mag;
}

uint32_t fp8_to_f32_bits(uint8_t code, bool e4m3, double scale) {
  return f32_bits_from_double(decode_fp8(code, e4m3) * scale);
}

uint32_t scaled_pk_fp8(uint32_t src0, uint32_t src1, uint32_t scale, uint32_t old_vdst,
                       bool word_sel_hi, uint32_t mode, bool e4m3) {
  const bool saturate = (mode & mode::kFp16Ovfl) != 0;
  const double divisor = decode_e8m0(scale_byte_of(scale));
  const auto convert = [&](uint32_t src) {
    const double v = static_cast<double>(f32_from_bits(flush_f32_input(src, mode)));
    // Dividing by a power of two is exact in double, so the only rounding is the FP8 one.
    return encode_fp8(v / divisor, saturate, e4m3);
  };
  return pack_word(old_vdst, word_sel_hi, convert(src0), convert(src1));
}

}  // namespace

float f32_from_bits(uint32_t bits) { return as_f32(bits); }

uint32_t bits_from_f32(float value) { return as_u32(value); }

double decode_e4m3(uint8_t code) { return decode_fp8(code, true); }
double decode_e5m2(uint8_t code) { return decode_fp8(code, false); }
double decode_e2m3(uint8_t code) { return decode_subbyte(code & 0x3Fu, kE2M3); }
double decode_e3m2(uint8_t code) { return decode_subbyte(code & 0x3Fu, kE3M2); }
double decode_e2m1(uint8_t code) { return decode_subbyte(code & 0x0Fu, kE2M1); }

double decode_e8m0(uint8_t code) {
  if (code == 0xFFu) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(code) - 127);
}

double decode_bf16(uint16_t bits) {
  return static_cast<double>(f32_from_bits(static_cast<uint32_t>(bits) << 16));
}

double decode_f16(uint16_t bits) {
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  const uint32_t expf = (bits >> 10) & 0x1Fu;
  const uint32_t mant = bits & 0x3FFu;
  if (expf == 0x1Fu) {
    return mant ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
                : sign * std::numeric_limits<double>::infinity();
  }
  if (expf == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(static_cast<double>(0x400u | mant), static_cast<int>(expf) - 25);
}

uint8_t encode_e4m3(double value, bool saturate) { return encode_fp8(value, saturate, true); }
uint8_t encode_e5m2(double value, bool saturate) { return encode_fp8(value, saturate, false); }
uint8_t encode_e2m3(double value) { return encode_mx_subbyte(value, kE2M3); }
uint8_t encode_e3m2(double value) { return encode_mx_subbyte(value, kE3M2); }
uint8_t encode_e2m1(double value) { return encode_mx_subbyte(value, kE2M1); }

uint16_t encode_bf16(float value) {
  const uint32_t bits = bits_from_f32(value);
  if (is_f32_nan(bits)) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits; a carry into the exponent is the correct
  // next binade (and produces infinity from the largest finite values).
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

uint32_t cvt_pk_fp8_f32(uint32_t src0, uint32_t src1, uint32_t old_vdst, bool word_sel_hi,
                        uint32_t mode) {
  return scaled_pk_fp8(src0, src1, 127u << 23, old_vdst, word_sel_hi, mode, true);
}

uint32_t cvt_pk_bf8_f32(uint32_t src0, uint32_t src1, uint32_t old_vdst, bool word_sel_hi,
                        uint32_t mode) {
  return scaled_pk_fp8(src0, src1, 127u << 23, old_vdst, word_sel_hi, mode, false);
}

uint32_t cvt_f32_fp8(uint32_t src, int byte_sel) {
  return fp8_to_f32_bits(byte_of(src, byte_sel), true, 1.0);
}

uint32_t cvt_f32_bf8(uint32_t src, int byte_sel) {
  return fp8_to_f32_bits(byte_of(src, byte_sel), false, 1.0);
}

F32Pair cvt_pk_f32_fp8(uint32_t src, bool word_sel_hi) {
  const int base = word_sel_hi ? 2 : 0;
  return {cvt_f32_fp8(src, base), cvt_f32_fp8(src, base + 1)};
}

F32Pair cvt_pk_f32_bf8(uint32_t src, bool word_sel_hi) {
  const int base = word_sel_hi ? 2 : 0;
  return {cvt_f32_bf8(src, base), cvt_f32_bf8(src, base + 1)};
}

uint32_t cvt_scalef32_pk_fp8_f32(uint32_t src0, uint32_t src1, uint32_t scale,
                                 uint32_t old_vdst, bool word_sel_hi, uint32_t mode) {
  return scaled_pk_fp8(src0, src1, scale, old_vdst, word_sel_hi, mode, true);
}

uint32_t cvt_scalef32_pk_bf8_f32(uint32_t src0, uint32_t src1, uint32_t scale,
                                 uint32_t old_vdst, bool word_sel_hi, uint32_t mode) {
  return scaled_pk_fp8(src0, src1, scale, old_vdst, word_sel_hi, mode, false);
}

uint32_t cvt_scalef32_f32_fp8(uint32_t src, uint32_t scale, int byte_sel) {
  return fp8_to_f32_bits(byte_of(src, byte_sel), true, decode_e8m0(scale_byte_of(scale)));
}

uint32_t cvt_scalef32_f32_bf8(uint32_t src, uint32_t scale, int byte_sel) {
  return fp8_to_f32_bits(byte_of(src, byte_sel), false, decode_e8m0(scale_byte_of(scale)));
}

F32Pair cvt_scalef32_pk_f32_fp8(uint32_t src, uint32_t scale, bool word_sel_hi) {
  const int base = word_sel_hi ? 2 : 0;
  return {cvt_scalef32_f32_fp8(src, scale, base), cvt_scalef32_f32_fp8(src, scale, base + 1)};
}

F32Pair cvt_scalef32_pk_f32_bf8(uint32_t src, uint32_t scale, bool word_sel_hi) {
  const int base = word_sel_hi ? 2 : 0;
  return {cvt_scalef32_f32_bf8(src, scale, base), cvt_scalef32_f32_bf8(src, scale, base + 1)};
}

uint32_t cvt_pk_bf16_f32(uint32_t a, uint32_t b, uint32_t mode) {
  const auto convert = [mode](uint32_t src) -> uint32_t {
    uint16_t h = encode_bf16(f32_from_bits(flush_f32_input(src, mode)));
    // bf16 shares the f32 exponent range, so a bf16 denormal result is an f32-range denormal
    // and follows the f32 output-denormal enable.
    const bool denormal = (h & 0x7F80u) == 0 && (h & 0x007Fu) != 0;
    if (denormal && (mode & mode::kFp32DenormOut) == 0) h &= 0x8000u;
    return h;
  };
  return convert(a) | (convert(b) << 16);
}

uint32_t cvt_pkrtz_f16_f32(uint32_t a, uint32_t b, uint32_t mode) {
  const auto convert = [mode](uint32_t src) -> uint32_t {
    src = flush_f32_input(src, mode);
    const uint32_t sign = (src >> 16) & 0x8000u;
    if (is_f32_nan(src)) return sign | 0x7E00u | ((src >> 13) & 0x3FFu);  // quiet, payload kept
    if ((src & 0x7FFFFFFFu) == 0x7F800000u) return sign | 0x7C00u;
    const double mag = std::fabs(static_cast<double>(f32_from_bits(src)));
    if (mag >= 65504.0) return sign | 0x7BFFu;
    if (mag == 0.0) return sign;
    int e = 0;
    std::frexp(mag, &e);
    e = std::max(e - 1, -14);  // binary16: normal exponents from -14, 10 mantissa bits
    const double units = std::trunc(mag / std::ldexp(1.0, e - 10));  // toward zero
    uint32_t h;
    if (units < 1024.0) {  // subnormal (e == -14 and below the smallest normal)
      h = static_cast<uint32_t>(units);
      if (h != 0 && (mode & mode::kFp64Fp16DenormOut) == 0) h = 0;
    } else {
      h = (static_cast<uint32_t>(e + 15) << 10) | (static_cast<uint32_t>(units) - 1024u);
    }
    return sign | h;
  };
  return convert(a) | (convert(b) << 16);
}

}  // namespace zyfa::emu
