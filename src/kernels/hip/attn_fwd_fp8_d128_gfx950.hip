// FP8 e4m3 causal attention forward, d = 128, for gfx950, for varlen batches and
// seqlen_k > seqlen_q: the 8-wave ping-pong kernel with the FP8 parts of attn_fwd_fp8_gfx950.h
// at d_qk = 128 (fixed lengths run the generated kernel attn_fwd_fp8_d128, whose assembly has
// no varlen path). The work split is that of the BF16 d 128 ping-pong kernel.
#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "attn_fwd_fp8_gfx950.h"

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::bf16_d128_gfx950::kThreads) void
attn_fwd_fp8_d128_gfx950_varlen(zyfa::kernels::AttnLengthsArgs) {
  __shared__ zyfa::kernels::Fp8Lds<128> lds;
  zyfa::kernels::attn_fwd_pingpong<zyfa::kernels::Fp8Kernel<128, true>>(lds);
}
