// Baseline BF16 attention kernels for gfx950 (see attn_fwd_common.h).
#include "attn_fwd_common.h"

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).

extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_bf16_d128(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<false, 128>();
}

extern "C" __global__ __launch_bounds__(zyfa::kernels::kAttnThreads) void attn_fwd_bf16_d192(AttnFwdArgs) {
  zyfa::kernels::attn_fwd<false, 192>();
}
