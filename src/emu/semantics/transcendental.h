// gfx950 VALU transcendental instructions (f32) on raw bits.
//
// The hardware computes these approximately; the ISA bounds the error (1 ULP) but does not
// say which of the admissible results it returns. The emulator returns the correctly rounded
// result (RNE) of the exact function, computed in double precision, for every finite input
// (see transcendental.cpp for why double suffices and the special-value rules with sources).
// Denormals: these instructions flush f32 denormal inputs and results to zero (sign kept)
// whatever MODE.FP_DENORM says (see transcendental.cpp for the evidence). `mode` is taken so
// a MODE-dependent behaviour found later changes no caller.
#pragma once

#include <cstdint>

namespace zyfa::emu {

uint32_t v_exp_f32(uint32_t src, uint32_t mode);   // 2^x
uint32_t v_log_f32(uint32_t src, uint32_t mode);   // log2(x)
uint32_t v_rcp_f32(uint32_t src, uint32_t mode);   // 1/x
uint32_t v_rsq_f32(uint32_t src, uint32_t mode);   // 1/sqrt(x)
uint32_t v_sqrt_f32(uint32_t src, uint32_t mode);  // sqrt(x)

}  // namespace zyfa::emu
