// gfx950 data-conversion semantics on raw bits: FP8 (OCP e4m3fn, "fp8"), BF8 (OCP e5m2),
// BF16, the MX sub-byte formats of the f8f6f4 MFMAs (e2m3, e3m2, e2m1) and E8M0 scales.
// Functions named after instructions take and return register bits exactly as the
// instruction reads and writes them. Sources are cited in convert.cpp.
#pragma once

#include <cstdint>

namespace zyfa::emu {

// MODE hardware register (s_setreg/s_getreg HW_REG_MODE), gfx9/CDNA layout.
namespace mode {
constexpr uint32_t kFpRoundShift = 0;    // [3:0]  round mode, 0 = RNE for f32 and f64/f16
constexpr uint32_t kFpDenormShift = 4;   // [7:4]  denormal enables, see below
constexpr uint32_t kFp32DenormIn = 1u << 4;   // allow f32 input denormals (else flushed)
constexpr uint32_t kFp32DenormOut = 1u << 5;  // allow f32 output denormals (else flushed)
constexpr uint32_t kFp64Fp16DenormIn = 1u << 6;
constexpr uint32_t kFp64Fp16DenormOut = 1u << 7;
constexpr uint32_t kDx10Clamp = 1u << 8;
constexpr uint32_t kIeee = 1u << 9;
constexpr uint32_t kFp16Ovfl = 1u << 23;  // saturate FP8/BF8/F16 conversions instead of inf/NaN
// What an LLVM-compiled gfx950 kernel starts with: RNE, all denormals on, DX10 clamp, IEEE.
constexpr uint32_t kKernelDefault = 0xF0u | kDx10Clamp | kIeee;
}  // namespace mode

// ---- Format helpers (exact decode; encode with round-to-nearest-even) ----
float f32_from_bits(uint32_t bits);
uint32_t bits_from_f32(float value);

double decode_e4m3(uint8_t code);   // OCP e4m3fn: bias 7, no inf, S.1111.111 = NaN, max 448
double decode_e5m2(uint8_t code);   // OCP e5m2: bias 15, IEEE-like inf/NaN, max 57344
double decode_e2m3(uint8_t code);   // OCP MX fp6 (low 6 bits): bias 1, no inf/NaN, max 7.5
double decode_e3m2(uint8_t code);   // OCP MX fp6 (low 6 bits): bias 3, no inf/NaN, max 28
double decode_e2m1(uint8_t code);   // OCP MX fp4 (low 4 bits): bias 1, no inf/NaN, max 6
double decode_e8m0(uint8_t code);   // OCP E8M0 scale: 2^(code-127), 0xFF = NaN
double decode_bf16(uint16_t bits);
double decode_f16(uint16_t bits);   // IEEE binary16

// Encoders round a value exactly representable in double (every f32, and f32 times a power of
// two) to nearest even. `saturate` clamps finite overflow to the largest finite magnitude;
// without it overflow gives NaN (e4m3, which has no infinity) or infinity (e5m2). Infinite
// inputs are "true" infinities and are never clamped: NaN for e4m3, infinity for e5m2.
// NaN input gives the all-ones NaN code with the input's sign (0x7F / 0xFF).
uint8_t encode_e4m3(double value, bool saturate);
uint8_t encode_e5m2(double value, bool saturate);
// Low 6 / 4 bits. The MX sub-byte formats have no NaN or infinity: overflow and infinity
// saturate, NaN gives the largest magnitude (these encoders serve tests; the emulator only
// decodes these formats).
uint8_t encode_e2m3(double value);
uint8_t encode_e3m2(double value);
uint8_t encode_e2m1(double value);
// RNE to bf16; NaN is quieted (quiet bit forced), sign and upper payload kept.
uint16_t encode_bf16(float value);

// ---- Instructions ----
// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32: converts src0 -> byte 0 and src1 -> byte 1 of the word
// selected by op_sel[3] (word_sel_hi), keeping the other word of old_vdst. Saturation iff
// MODE.FP16_OVFL; f32 input denormals flushed unless MODE allows f32 input denormals.
uint32_t cvt_pk_fp8_f32(uint32_t src0, uint32_t src1, uint32_t old_vdst, bool word_sel_hi,
                        uint32_t mode);
uint32_t cvt_pk_bf8_f32(uint32_t src0, uint32_t src1, uint32_t old_vdst, bool word_sel_hi,
                        uint32_t mode);
// v_cvt_f32_fp8 / v_cvt_f32_bf8: byte byte_sel (SDWA src0_sel or op_sel) of src to f32 (exact).
uint32_t cvt_f32_fp8(uint32_t src, int byte_sel);
uint32_t cvt_f32_bf8(uint32_t src, int byte_sel);
// v_cvt_pk_f32_fp8 / v_cvt_pk_f32_bf8: the two bytes of the word chosen by word_sel_hi to two
// f32 (lo = first byte, hi = second byte).
struct F32Pair { uint32_t lo, hi; };
F32Pair cvt_pk_f32_fp8(uint32_t src, bool word_sel_hi);
F32Pair cvt_pk_f32_bf8(uint32_t src, bool word_sel_hi);

// gfx950 scaled conversions. Down-conversion divides by 2^exponent(scale) before rounding;
// up-conversion multiplies (see convert.cpp for sources and the exact rule).
uint32_t cvt_scalef32_pk_fp8_f32(uint32_t src0, uint32_t src1, uint32_t scale,
                                 uint32_t old_vdst, bool word_sel_hi, uint32_t mode);
uint32_t cvt_scalef32_pk_bf8_f32(uint32_t src0, uint32_t src1, uint32_t scale,
                                 uint32_t old_vdst, bool word_sel_hi, uint32_t mode);
uint32_t cvt_scalef32_f32_fp8(uint32_t src, uint32_t scale, int byte_sel);
uint32_t cvt_scalef32_f32_bf8(uint32_t src, uint32_t scale, int byte_sel);
F32Pair cvt_scalef32_pk_f32_fp8(uint32_t src, uint32_t scale, bool word_sel_hi);
F32Pair cvt_scalef32_pk_f32_bf8(uint32_t src, uint32_t scale, bool word_sel_hi);

// v_cvt_pk_bf16_f32 (gfx950): lo = bf16(a), hi = bf16(b), RNE, NaN quieted; f32 input
// denormals flushed unless MODE allows them.
uint32_t cvt_pk_bf16_f32(uint32_t a, uint32_t b, uint32_t mode);

// v_cvt_pkrtz_f16_f32: lo = f16(a), hi = f16(b), rounding toward zero whatever MODE says
// (pseudocode: ROUND_MODE = ROUND_TOWARD_ZERO). f32 input denormals follow the f32 input
// enable; f16 denormal results are flushed unless MODE allows f16/f64 output denormals.
// Toward zero never overflows: finite values beyond 65504 give +-65504; infinities stay.
uint32_t cvt_pkrtz_f16_f32(uint32_t a, uint32_t b, uint32_t mode);

}  // namespace zyfa::emu
