// Baseline FP8 e4m3 attention kernels for gfx950 (see attn_fwd_common.h).
#include "attn_fwd_common.h"

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).

// At d = 128 the generated assembly kernel (src/asm/gen_attn_fwd_fp8_d128.py) is
// attn_fwd_fp8_d128; this one serves the problems beyond its 32-bit row offsets.
extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_fp8_d128_hip(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<true, 128>();
}

extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_fp8_d192(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<true, 192>();
}
