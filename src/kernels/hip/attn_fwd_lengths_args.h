// Kernel arguments of the gfx950 ping-pong kernels' any-lengths instantiations (the *_varlen
// kernels): varlen batches (cu_seqlens) and fixed lengths with seqlen_k > seqlen_q. The
// fixed-length kernels' arguments come first, unchanged, so that the shared tile loop reads
// them at the same offsets; what only these kernels need follows.
#pragma once

#include "attn_fwd_args.h"

namespace zyfa::kernels {

struct ZYFA_KERNEL_ARGS AttnLengthsArgs {
  // seqlen: queries per sequence (varlen: max_seqlen_q); lse: (batch, heads, seqlen), or
  // (heads, total_q) for varlen (lse_rows below).
  AttnFwdArgs f;
  // Device prefix sums of batch + 1 int32 each, read by the kernel through
  // varlen::span_of (clamped into the tensors); 0 for fixed lengths.
  uint64_t cu_seqlens_q;
  uint64_t cu_seqlens_k;
  int64_t lse_rows;  // LSE row stride per (batch, head): seqlen, or total_q for varlen
  // Varlen: rows of the packed q/out and k/v tensors, below 2^31 (the host refuses more), so
  // that the clamping of a sequence's rows takes 32-bit scalar registers.
  int32_t total_q;
  int32_t total_k;
  int32_t seqlen_k;  // keys per sequence (varlen: max_seqlen_k)
  int32_t reserved;  // keeps the size a multiple of 8
};

}  // namespace zyfa::kernels
