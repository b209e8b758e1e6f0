// FP8 e4m3 causal attention forward, d_qk = 192 / d_v = 128, for gfx950: the 8-wave ping-pong
// kernel with the FP8 parts of attn_fwd_fp8_gfx950.h.
#include "attn_fwd_fp8_d192_gfx950_args.h"
#include "attn_fwd_fp8_gfx950.h"

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::fp8_d192_gfx950::kThreads) void attn_fwd_fp8_d192_gfx950(
    AttnFwdArgs) {
  __shared__ zyfa::kernels::Fp8Lds<192> lds;
  zyfa::kernels::attn_fwd_pingpong<zyfa::kernels::Fp8Kernel<192>>(lds);
}

// The same kernel for varlen batches and seqlen_k > seqlen_q (attn_fwd_lengths_args.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::fp8_d192_gfx950::kThreads) void
attn_fwd_fp8_d192_gfx950_varlen(zyfa::kernels::AttnLengthsArgs) {
  __shared__ zyfa::kernels::Fp8Lds<192> lds;
  zyfa::kernels::attn_fwd_pingpong<zyfa::kernels::Fp8Kernel<192, true>>(lds);
}
