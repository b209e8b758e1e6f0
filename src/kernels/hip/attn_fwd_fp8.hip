// Baseline FP8 e4m3 attention kernels for gfx950 (see attn_fwd_common.h).
#include "attn_fwd_common.h"

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).

// The generated assembly kernels (src/asm/gen_attn_fwd_fp8.py) are attn_fwd_fp8_d128 and
// attn_fwd_fp8_d192; these serve the problems beyond their 32-bit row offsets (at d_qk 192
// those that the ping-pong kernel attn_fwd_fp8_d192_gfx950 cannot take either).
extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_fp8_d128_hip(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<true, 128>();
}

extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_fp8_d192_hip(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<true, 192>();
}
