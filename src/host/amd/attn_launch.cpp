#include "host/amd/attn_launch.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string_view>

#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "attn_fwd_bf16_d192_gfx950_args.h"
#include "attn_fwd_fp8_d192_gfx950_args.h"
#include "asm/kernel_args_asserts.h"
#include "host/error.h"
#include "host/plan/kernel_args.h"

namespace zyfa::amd {
namespace {

size_t elem_bytes(zyfa_dtype_t t) { return t == ZYFA_DTYPE_FP8_E4M3 ? 1 : 2; }

uint64_t address(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

const char* any_lengths_kernel(const FwdProblem& p);

size_t descale_extent(const Descale& d, const FwdProblem& p) {
  if (d.kind != ZYFA_DESCALE_DEVICE) return 0;
  const int64_t last = (p.batch - 1) * d.stride_batch + (p.heads_k - 1) * d.stride_head_k;
  return static_cast<size_t>(last + 1) * sizeof(float);
}

}  // namespace

zyfa_status_t check_attn_supported(const FwdProblem& p, const char* backend) {
  const int64_t n_tiles = (p.seqlen + kernels::kAttnTileRows - 1) / kernels::kAttnTileRows;
  if (p.seqlen > INT32_MAX / 2 || p.batch * p.heads * n_tiles > INT32_MAX)
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "backend = {}: batch = {}, heads = {}, seqlen = {}: {} query tiles exceed the 31-bit tile ids of the gfx950 kernels",
                backend, p.batch, p.heads, p.seqlen, p.batch * p.heads * n_tiles);
  // The kernels read q and k rows in 16-byte pieces.
  const size_t eb = elem_bytes(p.in_dtype);
  const struct { const char* name; const View& v; } inputs[] = {{"q", p.q}, {"k", p.k}};
  for (const auto& in : inputs) {
    if (address(in.v.data) % 16 != 0)
      return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = {}: {}.data = {}: the gfx950 kernels need 16-byte aligned rows",
                  backend, in.name, in.v.data);
    for (int i = 0; i < 3; ++i)
      if ((in.v.stride[i] * static_cast<int64_t>(eb)) % 16 != 0)
        return fail(ZYFA_STATUS_NOT_SUPPORTED,
                    "backend = {}: {}.stride[{}] = {}: the gfx950 kernels need row strides that are multiples of 16 bytes",
                    backend, in.name, i, in.v.stride[i]);
  }
  // Four consecutive BF16 outputs of a lane are stored together (8 bytes).
  if (address(p.out.data) % 8 != 0)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = {}: out.data = {}: the gfx950 kernels need 8-byte aligned rows",
                backend, p.out.data);
  for (int i = 0; i < 3; ++i)
    if (p.out.stride[i] % 4 != 0)
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: out.stride[{}] = {}: the gfx950 kernels need output strides that are multiples of 4",
                  backend, i, p.out.stride[i]);
  if (any_lengths(p)) {
    const char* what = p.varlen() ? "varlen batches" : "seqlen_k above seqlen_q";
    if (!any_lengths_kernel(p)) {
      // The first field that keeps the view off the ping-pong kernels (q and k rows are
      // 16-byte aligned already, checked above): v's alignment, else a row stride whose
      // offsets within a sequence pass 32 bits.
      const int64_t eb = static_cast<int64_t>(elem_bytes(p.in_dtype));
      if (address(p.v.data) % 16 != 0)
        return fail(ZYFA_STATUS_NOT_SUPPORTED,
                    "backend = {}: v.data = {}: {} run on the gfx950 ping-pong kernels only, which need 16-byte "
                    "aligned v rows",
                    backend, p.v.data, what);
      for (int i = 0; i < 3; ++i)
        if ((p.v.stride[i] * eb) % 16 != 0)
          return fail(ZYFA_STATUS_NOT_SUPPORTED,
                      "backend = {}: v.stride[{}] = {}: {} run on the gfx950 ping-pong kernels only, which need "
                      "v row strides that are multiples of 16 bytes",
                      backend, i, p.v.stride[i], what);
      const bool v_far = p.v.stride[1] < 0 || p.v.stride[1] * p.d_v > p.k.stride[1] * p.d_qk;
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: {}.stride[1] = {}: {} run on the gfx950 ping-pong kernels only, whose k and v rows "
                  "must lie within 32-bit byte offsets of the first",
                  backend, v_far ? "v" : "k", v_far ? p.v.stride[1] : p.k.stride[1], what);
    }
    if (p.varlen() && (p.total_q > INT32_MAX || p.total_k > INT32_MAX))
      return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = {}: {}.shape[1] = {}: the gfx950 kernels take up to 2^31 - 1 packed rows",
                  backend, p.total_q > INT32_MAX ? "q" : "k", std::max(p.total_q, p.total_k));
    if (p.varlen() && varlen::cost_buckets(varlen_shape(p)) > kernels::kVarlenJobBuckets)
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: desc->max_seqlen_k = {}: above the {} cost buckets of the gfx950 varlen job builder",
                  backend, p.seqlen_k, kernels::kVarlenJobBuckets);
    if (p.varlen() && (p.batch >= INT32_MAX / 2 || varlen::table_words(varlen_shape(p)) > (uint64_t{1} << 29)))
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: desc->varlen_batch = {} with max_seqlen_q = {} and {} heads: above the varlen job "
                  "table's 2 GiB",
                  backend, p.batch, p.seqlen, p.heads);
  }
  return ZYFA_STATUS_SUCCESS;
}

namespace {

// Query rows per tile and threads per workgroup of the generated FP8 kernels (d_qk 128 and 192).
constexpr int kFp8AsmTileRows = 256;
constexpr int kFp8AsmThreads = 512;

// The generated FP8 kernels (src/asm/gen_attn_fwd_fp8.py: attn_fwd_fp8_d128, attn_fwd_fp8_d192) address q, k, v and
// out rows with a 64-bit scalar base per (batch, head) plus a 32-bit per-lane byte offset
// (row * row stride), and device descales with a 32-bit byte offset. Problems beyond those
// offsets run on HIP kernels instead (the baseline uses 64-bit addresses throughout).
// Any lengths (the varlen kernel): the same per sequence, whose rows are offsets from its
// first (its base holds the rest, 64-bit): at most max_seqlen_q query rows, and key rows
// loaded up to a key tile past the 64-key blocks of max_seqlen_k before they are clamped.
bool fits_32bit_offsets(const FwdProblem& p) {
  constexpr int64_t kLimit = int64_t{1} << 32;
  const int64_t last_row = p.seqlen - 1;
  // K and V rows are loaded in 128-key tiles up to the end of the last 256-row query tile
  // (seqlen + 255 at most) before they are clamped to the last row.
  const int64_t last_kv_row = any_lengths(p) ? p.seqlen_k + 383 : p.seqlen + 255;
  if (p.q.stride[1] < 0 || last_row * p.q.stride[1] + p.d_qk >= kLimit) return false;
  // (The varlen kernel multiplies a sequence's first row by the low words of the q and out
  // row strides.)
  if (any_lengths(p) && (p.q.stride[1] >= kLimit || p.out.stride[1] >= kLimit)) return false;
  const struct { const View& v; int64_t row; } kv[2] = {{p.k, p.d_qk}, {p.v, p.d_v}};
  for (const auto& x : kv)
    if (x.v.stride[1] < 0 || last_kv_row * x.v.stride[1] + x.row >= kLimit) return false;
  if (p.out.stride[1] < 0 || 2 * (last_row * p.out.stride[1] + p.d_v) >= kLimit) return false;
  const Descale* ds[3] = {&p.q_descale, &p.k_descale, &p.v_descale};
  for (const Descale* d : ds)
    if (d->kind == ZYFA_DESCALE_DEVICE &&
        (d->stride_batch < 0 || d->stride_head_k < 0 ||
         4 * ((p.batch - 1) * d->stride_batch + (p.heads_k - 1) * d->stride_head_k) >= kLimit))
      return false;
  return true;
}

// Whether a view's rows can be read in 16-byte pieces: its data and strides (bytes) aligned.
bool rows_16_aligned(const View& v, int elem_bytes) {
  if (address(v.data) % 16 != 0) return false;
  for (int i = 0; i < 3; ++i)
    if ((v.stride[i] * elem_bytes) % 16 != 0) return false;
  return true;
}

// The ping-pong kernels (BF16 d_qk 128 and 192, FP8 d_qk 192) also read V rows in 16-byte
// pieces (into LDS), and address K and V rows with a 32-bit byte offset from the (batch, head)
// base, up to the row's last element; other views run on the baseline kernels. The FP8 one
// reads K rows by LDS DMA in 16- and 4-byte pieces as well (the baseline gathers V by bytes).
// (Varlen: the offset of a sequence's rows from its first, bounded by the packed tensor.)
bool fits_pingpong_gfx950(const FwdProblem& p, int elem_bytes) {
  if (!rows_16_aligned(p.v, elem_bytes)) return false;
  if (elem_bytes == 1 && !rows_16_aligned(p.k, elem_bytes)) return false;
  constexpr int64_t kLimit = int64_t{1} << 32;
  const int64_t rows = p.varlen() ? p.total_k : p.seqlen_k;
  const struct { const View& v; int64_t row; } kv[2] = {{p.k, p.d_qk}, {p.v, p.d_v}};
  for (const auto& x : kv)
    if (x.v.stride[1] < 0 || elem_bytes * ((rows - 1) * x.v.stride[1] + x.row) >= kLimit) return false;
  return true;
}

// The any-lengths kernel of a problem, or null: the ping-pong kernels' (BF16 and FP8, d 128
// and 192/128) where their row alignment and offsets allow.
// FP8: the generated varlen kernels where their offsets reach (as the fixed-length ones).
const char* any_lengths_kernel(const FwdProblem& p) {
  const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
  if (fp8 && fits_32bit_offsets(p)) return p.d_qk == 192 ? "attn_fwd_fp8_d192_varlen" : "attn_fwd_fp8_d128_varlen";
  if (!fits_pingpong_gfx950(p, fp8 ? 1 : 2)) return nullptr;
  if (p.d_qk == 192) return fp8 ? "attn_fwd_fp8_d192_gfx950_varlen" : "attn_fwd_bf16_d192_gfx950_varlen";
  return fp8 ? "attn_fwd_fp8_d128_gfx950_varlen" : "attn_fwd_bf16_d128_gfx950_varlen";
}

}  // namespace

bool any_lengths(const FwdProblem& p) { return p.varlen() || p.seqlen_k != p.seqlen; }

const char* attn_kernel_name(const FwdProblem& p) {
  const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
  if (any_lengths(p)) {
    const char* name = any_lengths_kernel(p);
    return name ? name : "";  // refused by check_attn_supported
  }
  // FP8: the generated kernel where its offsets reach; beyond them HIP kernels (same arguments).
  if (p.d_qk == 192 && fp8) {
    if (fits_32bit_offsets(p)) return "attn_fwd_fp8_d192";
    return fits_pingpong_gfx950(p, 1) ? "attn_fwd_fp8_d192_gfx950" : "attn_fwd_fp8_d192_hip";
  }
  if (p.d_qk == 192) return fits_pingpong_gfx950(p, 2) ? "attn_fwd_bf16_d192_gfx950" : "attn_fwd_bf16_d192";
  if (!fp8) return fits_pingpong_gfx950(p, 2) ? "attn_fwd_bf16_d128_gfx950" : "attn_fwd_bf16_d128";
  return fits_32bit_offsets(p) ? "attn_fwd_fp8_d128" : "attn_fwd_fp8_d128_hip";
}

AttnKernelShape attn_kernel_shape(const FwdProblem& p) {
  namespace pp = kernels::bf16_d128_gfx950;
  namespace pp192 = kernels::bf16_d192_gfx950;
  const std::string_view name = attn_kernel_name(p);
  if (name == "attn_fwd_bf16_d128_gfx950" || name == "attn_fwd_bf16_d128_gfx950_varlen" ||
      name == "attn_fwd_fp8_d128_gfx950_varlen")
    return {pp::kTileRows, pp::kThreads};
  if (name == "attn_fwd_bf16_d192_gfx950" || name == "attn_fwd_bf16_d192_gfx950_varlen")
    return {pp192::kTileRows, pp192::kThreads};
  if (name == "attn_fwd_fp8_d192_gfx950" || name == "attn_fwd_fp8_d192_gfx950_varlen")
    return {kernels::fp8_d192_gfx950::kTileRows, kernels::fp8_d192_gfx950::kThreads};
  // The generated FP8 kernels: 8 waves in ping-pong on 256 query rows
  // (src/asm/gen_attn_fwd_fp8.py, TILE_Q and THREADS).
  if (name == "attn_fwd_fp8_d128" || name == "attn_fwd_fp8_d192" || name == "attn_fwd_fp8_d128_varlen" ||
      name == "attn_fwd_fp8_d192_varlen")
    return {kFp8AsmTileRows, kFp8AsmThreads};
  return {kernels::kAttnTileRows, kernels::kAttnThreads};
}

// The persistent grid for `jobs` jobs (attn_job_table_params says why).
static int32_t persistent_grid(uint64_t jobs, const AttnKernelShape& shape) {
  const uint64_t resident = uint64_t{256} * static_cast<uint64_t>(shape.workgroups_per_cu);
  return static_cast<int32_t>(jobs < resident ? (jobs > 0 ? jobs : 1) : resident);
}

double equal_jobs_idle_share(int64_t jobs, int64_t grid) {
  if (jobs <= 0 || grid <= 0) return 0.0;
  const int64_t rounds = (jobs + grid - 1) / grid;  // the busiest workgroups' jobs
  return 1.0 - static_cast<double>(jobs) / static_cast<double>(rounds * grid);
}

JobTableParams attn_job_table_params(const FwdProblem& p) {
  JobTableParams j;
  j.batch = p.batch;
  j.heads = p.heads;
  j.heads_k = p.heads_k;
  j.seqlen = p.seqlen;
  const AttnKernelShape shape = attn_kernel_shape(p);
  j.tile_rows = shape.tile_rows;
  // As many workgroups as the 256 CUs of an MI355X (8 XCDs) hold at once, fewer when there is
  // less work; workgroup i runs on XCD i % 8, and i and i + 256 share a CU.
  const int64_t tiles = p.batch * p.heads * ((p.seqlen + j.tile_rows - 1) / j.tile_rows);
  const int64_t jobs = (tiles + 1) / 2;
  j.grid = persistent_grid(static_cast<uint64_t>(jobs), shape);
  j.num_xcds = 8;
  // Equal jobs keep each XCD's K and V streams together (its workgroups run consecutive pairs
  // of one head, which share that XCD's L2); the balanced table deals lone tiles of different
  // heads to neighbouring workgroups, and so to all XCDs. It is still taken where equal jobs
  // leave workgroups idle for more than 2% of the work (jobs not a multiple of the grid, e.g.
  // S 18311 with 32 heads: 1152 jobs on 256 workgroups; docs/design.md, "Balance").
  if (equal_jobs_idle_share(jobs, j.grid) > 0.02) j.schedule = JobSchedule::kBalancedWork;
  return j;
}

kernels::AttnFwdArgs make_attn_args(const FwdProblem& p, const void* job_table) {
  kernels::AttnFwdArgs a{};
  a.q = address(p.q.data);
  a.k = address(p.k.data);
  a.v = address(p.v.data);
  a.out = address(p.out.data);
  a.lse = address(p.lse);
  a.job_table = address(job_table);
  plan::set_descales(p, &a, [](const float* ptr) { return address(ptr); });
  const View* views[4] = {&p.q, &p.k, &p.v, &p.out};
  int64_t* strides[4] = {a.q_stride, a.k_stride, a.v_stride, a.o_stride};
  for (int i = 0; i < 4; ++i)
    for (int d = 0; d < 3; ++d) strides[i][d] = views[i]->stride[d];
  a.scale_log2 = plan::scale_log2(p.softmax_scale);
  a.seqlen = static_cast<int32_t>(p.seqlen);
  a.heads = static_cast<int32_t>(p.heads);
  a.heads_k = static_cast<int32_t>(p.heads_k);
  const int64_t tile_rows = attn_kernel_shape(p).tile_rows;
  // (A varlen call's max_seqlen_q may be 0: no tile, a divisor of 1.)
  const int64_t n_tiles = std::max<int64_t>(1, (p.seqlen + tile_rows - 1) / tile_rows);
  a.div_n_tiles = kernels::make_fast_div(static_cast<uint32_t>(n_tiles));
  a.div_heads = kernels::make_fast_div(static_cast<uint32_t>(p.heads));
  a.div_group = kernels::make_fast_div(static_cast<uint32_t>(p.heads / p.heads_k));
  return a;
}

kernels::AttnLengthsArgs make_attn_lengths_args(const FwdProblem& p, const void* job_table) {
  kernels::AttnLengthsArgs a{};
  a.f = make_attn_args(p, job_table);
  a.cu_seqlens_q = address(p.cu_seqlens_q);
  a.cu_seqlens_k = address(p.cu_seqlens_k);
  a.total_q = static_cast<int32_t>(p.total_q);
  a.total_k = static_cast<int32_t>(p.total_k);
  a.lse_rows = p.varlen() ? p.total_q : p.seqlen;
  a.seqlen_k = static_cast<int32_t>(p.seqlen_k);
  return a;
}

varlen::Shape varlen_shape(const FwdProblem& p) {
  varlen::Shape s{};
  s.batch = static_cast<int32_t>(p.batch);
  s.heads = static_cast<int32_t>(p.heads);
  const AttnKernelShape k = attn_kernel_shape(p);
  s.tile_rows = k.tile_rows;
  s.block_n = kernels::bf16_d128_gfx950::kKeyBlock;  // every ping-pong kernel's key block
  s.max_q = static_cast<int32_t>(p.seqlen);
  s.max_k = static_cast<int32_t>(p.seqlen_k);
  s.total_q = p.total_q;
  s.total_k = p.total_k;
  // As for fixed lengths, with the most jobs the maxima allow (job_capacity reads no grid).
  s.grid = persistent_grid(varlen::job_capacity(s), k);
  return s;
}

VarlenWorkspace varlen_workspace(const FwdProblem& p) {
  const varlen::Shape s = varlen_shape(p);
  const auto align = [](uint64_t x) { return static_cast<size_t>((x + 255) / 256 * 256); };
  VarlenWorkspace w;
  w.table_bytes = static_cast<size_t>(varlen::table_words(s) * sizeof(uint32_t));
  w.scratch_offset = align(w.table_bytes);
  w.bytes = w.scratch_offset + align(varlen::scratch_layout(s).words * sizeof(uint32_t));
  return w;
}

kernels::VarlenJobTableArgs make_varlen_job_args(const FwdProblem& p, void* workspace) {
  kernels::VarlenJobTableArgs a{};
  a.cu_seqlens_q = address(p.cu_seqlens_q);
  a.cu_seqlens_k = address(p.cu_seqlens_k);
  a.table = address(workspace);
  a.scratch = address(workspace) + varlen_workspace(p).scratch_offset;
  a.shape = varlen_shape(p);
  return a;
}

std::vector<MemRange> varlen_job_buffers(const FwdProblem& p, void* workspace) {
  const VarlenWorkspace w = varlen_workspace(p);
  const size_t cu_bytes = static_cast<size_t>(p.batch + 1) * sizeof(int32_t);
  return {{p.cu_seqlens_q, cu_bytes, false},
          {p.cu_seqlens_k, cu_bytes, false},
          {workspace, w.table_bytes, true},
          {static_cast<char*>(workspace) + w.scratch_offset, w.bytes - w.scratch_offset, true}};
}

size_t view_extent_bytes(const View& v, const int64_t shape[4], size_t eb) {
  for (int i = 0; i < 4; ++i)
    if (shape[i] == 0) return 0;  // (a varlen tensor of no row)
  int64_t last = 0;
  for (int i = 0; i < 4; ++i) last += (shape[i] - 1) * v.stride[i];
  return static_cast<size_t>(last + 1) * eb;
}

std::vector<MemRange> attn_buffers(const FwdProblem& p, const void* job_table, size_t job_table_bytes) {
  const size_t eb = elem_bytes(p.in_dtype);
  // Varlen: the packed (1, total, heads, d) tensors.
  const int64_t nb = p.varlen() ? 1 : p.batch;
  const int64_t sq = p.varlen() ? p.total_q : p.seqlen, sk = p.varlen() ? p.total_k : p.seqlen_k;
  const int64_t qs[4] = {nb, sq, p.heads, p.d_qk};
  const int64_t ks[4] = {nb, sk, p.heads_k, p.d_qk};
  const int64_t vs[4] = {nb, sk, p.heads_k, p.d_v};
  const int64_t os[4] = {nb, sq, p.heads, p.d_v};
  std::vector<MemRange> b = {
      {p.q.data, view_extent_bytes(p.q, qs, eb), false},
      {p.k.data, view_extent_bytes(p.k, ks, eb), false},
      {p.v.data, view_extent_bytes(p.v, vs, eb), false},
      {p.out.data, view_extent_bytes(p.out, os, 2), true},
      {job_table, job_table_bytes, false},
  };
  if (p.lse) b.push_back({p.lse, static_cast<size_t>(nb * p.heads * sq) * sizeof(float), true});
  if (p.varlen()) {
    const size_t cu_bytes = static_cast<size_t>(p.batch + 1) * sizeof(int32_t);
    b.push_back({p.cu_seqlens_q, cu_bytes, false});
    b.push_back({p.cu_seqlens_k, cu_bytes, false});
  }
  const Descale* ds[3] = {&p.q_descale, &p.k_descale, &p.v_descale};
  for (const Descale* d : ds)
    if (d->kind == ZYFA_DESCALE_DEVICE) b.push_back({d->ptr, descale_extent(*d, p), false});
  return b;
}

}  // namespace zyfa::amd
