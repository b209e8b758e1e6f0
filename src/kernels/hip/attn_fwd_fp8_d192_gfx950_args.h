// Work split of the gfx950 FP8 d_qk = 192 / d_v = 128 ping-pong kernel
// (attn_fwd_fp8_d192_gfx950.hip): that of the BF16 ping-pong kernels, whose tile loop it
// shares (attn_fwd_bf16_gfx950.h); it takes the baseline kernels' AttnFwdArgs unchanged.
#pragma once

#include "attn_fwd_bf16_d128_gfx950_args.h"

namespace zyfa::kernels::fp8_d192_gfx950 {

inline constexpr int kDqk = 192;
using bf16_d128_gfx950::kKeyBlock;
using bf16_d128_gfx950::kThreads;
using bf16_d128_gfx950::kTileRows;
using bf16_d128_gfx950::kWaveRows;
using bf16_d128_gfx950::kWaves;

}  // namespace zyfa::kernels::fp8_d192_gfx950
