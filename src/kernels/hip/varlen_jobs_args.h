// Arguments of the gfx950 varlen job-table builder (varlen_jobs.hip): the prefix sums in
// device memory, where the table and the builder's scratch go, and the call's shape (its
// maxima and sizes, never a length).
#pragma once

#include "../varlen/varlen_jobs.h"
#include "kernel_args_common.h"

namespace zyfa::kernels {

inline constexpr int kVarlenJobThreads = 256;  // one workgroup, 4 waves
// Cost buckets of the counting sort, held in LDS (64 KiB): varlen::cost_buckets(shape) must
// not exceed it (max_seqlen_k up to about 512K keys; the host refuses more).
inline constexpr uint32_t kVarlenJobBuckets = 16384;

struct ZYFA_KERNEL_ARGS VarlenJobTableArgs {
  uint64_t cu_seqlens_q;  // batch + 1 int32 each
  uint64_t cu_seqlens_k;
  uint64_t table;    // varlen::table_words(shape) uint32 words
  uint64_t scratch;  // varlen::scratch_layout(shape).words uint32 words
  varlen::Shape shape;
};

}  // namespace zyfa::kernels
