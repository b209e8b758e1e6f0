// Work split of the gfx950 FP8 d_qk = 192 / d_v = 128 ping-pong kernel
// (attn_fwd_fp8_d192_gfx950.hip): that of the BF16 d 192/128 ping-pong kernel, whose tile loop
// it shares (attn_fwd_bf16_gfx950.h); it takes the baseline kernels' AttnFwdArgs unchanged.
#pragma once

#include "attn_fwd_bf16_d192_gfx950_args.h"

namespace zyfa::kernels {

namespace fp8_d192_gfx950 = bf16_d192_gfx950;

}  // namespace zyfa::kernels
