// From a validated FwdProblem to a launch of a baseline gfx950 attention kernel: which kernel,
// its argument struct, and every buffer it may touch. Pure functions, shared by hip and emu.
#pragma once

#include <vector>

#include "attn_fwd_args.h"
#include "attn_fwd_lengths_args.h"
#include "varlen_jobs_args.h"
#include "host/amd/amd_device.h"
#include "host/job_table.h"
#include "host/problem.h"

namespace zyfa::amd {

// NOT_SUPPORTED (with a message) for what the kernels cannot take: misaligned rows for their
// 16-byte loads, sizes beyond 32-bit row indices.
zyfa_status_t check_attn_supported(const FwdProblem& p, const char* backend_name);

const char* attn_kernel_name(const FwdProblem& p);

// Query rows per tile (the job table's tile_rows) and threads per workgroup of that kernel,
// and how many of its workgroups one CU holds at once (the persistent grid's per-CU share).
struct AttnKernelShape {
  int tile_rows;
  int threads;
  int workgroups_per_cu = 1;
};
AttnKernelShape attn_kernel_shape(const FwdProblem& p);

// Share of the workgroups' time left idle by equal jobs: the busiest hold ceil(jobs / grid).
double equal_jobs_idle_share(int64_t jobs, int64_t grid);

JobTableParams attn_job_table_params(const FwdProblem& p);

kernels::AttnFwdArgs make_attn_args(const FwdProblem& p, const void* device_job_table);

// Varlen batches and seqlen_k > seqlen_q run on the any-lengths instantiations of the
// ping-pong kernels (the *_varlen kernels), which take AttnLengthsArgs.
bool any_lengths(const FwdProblem& p);
kernels::AttnLengthsArgs make_attn_lengths_args(const FwdProblem& p, const void* device_job_table);

// A varlen call's job table is built on the device from cu_seqlens (the varlen_job_table
// kernel) into the call's workspace: the table at its start, the builder's scratch after it.
// Its shape holds the call's maxima and sizes, never a length.
varlen::Shape varlen_shape(const FwdProblem& p);
struct VarlenWorkspace {
  size_t table_bytes;
  size_t scratch_offset;
  size_t bytes;
};
VarlenWorkspace varlen_workspace(const FwdProblem& p);
kernels::VarlenJobTableArgs make_varlen_job_args(const FwdProblem& p, void* workspace);
std::vector<MemRange> varlen_job_buffers(const FwdProblem& p, void* workspace);

// Bytes a strided (batch, seqlen, heads, head_dim) view spans from its data pointer.
size_t view_extent_bytes(const View& v, const int64_t shape[4], size_t elem_bytes);

std::vector<MemRange> attn_buffers(const FwdProblem& p, const void* device_job_table,
                                   size_t job_table_bytes);

}  // namespace zyfa::amd
