// BF16 causal attention forward, d_qk = 192 / d_v = 128, for gfx950: the 8-wave ping-pong
// kernel of attn_fwd_bf16_gfx950.h at d_qk = 192 (K blocks of 24 KiB in LDS, Q^T in 48
// registers).
#include "attn_fwd_bf16_d192_gfx950_args.h"
#include "attn_fwd_bf16_gfx950.h"

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::bf16_d192_gfx950::kThreads) void attn_fwd_bf16_d192_gfx950(
    AttnFwdArgs) {
  __shared__ zyfa::kernels::Lds<zyfa::kernels::bf16_d192_gfx950::kDqk> lds;
  zyfa::kernels::attn_fwd_pingpong<zyfa::kernels::Bf16Kernel<zyfa::kernels::bf16_d192_gfx950::kDqk>>(lds);
}

// The same kernel for varlen batches and seqlen_k > seqlen_q (attn_fwd_lengths_args.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::bf16_d192_gfx950::kThreads) void
attn_fwd_bf16_d192_gfx950_varlen(zyfa::kernels::AttnLengthsArgs) {
  __shared__ zyfa::kernels::Lds<zyfa::kernels::bf16_d192_gfx950::kDqk> lds;
  zyfa::kernels::attn_fwd_pingpong<zyfa::kernels::Bf16Kernel<zyfa::kernels::bf16_d192_gfx950::kDqk, true>>(lds);
}
