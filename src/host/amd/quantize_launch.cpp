#include "host/amd/quantize_launch.h"

#include <algorithm>
#include <cstdint>

#include "host/error.h"
#include "host/even_rows.h"

namespace zyfa::amd {
namespace {

// Grid dimensions y and z of one launch stay within what every HIP runtime accepts.
constexpr int64_t kMaxGridYZ = 65535;

struct Dim {
  int64_t size, src_stride, dst_stride;  // elements
};

uint64_t address(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// The bytes from the first element of src and of dst to one past their last: the memory
// ranges the launches declare.
void tensor_extents(const QuantizeProblem& p, int64_t src_elem_bytes, size_t* src_bytes, size_t* dst_bytes) {
  int64_t src_last = 0, dst_last = 0;
  for (int i = 0; i < 4; ++i) {
    src_last += (p.shape[i] - 1) * p.src.stride[i];
    dst_last += (p.shape[i] - 1) * p.dst.stride[i];
  }
  *src_bytes = static_cast<size_t>((src_last + 1) * src_elem_bytes);
  *dst_bytes = static_cast<size_t>(dst_last + 1);
}

// Whether the staged kernels take this call: BF16 Hadamard rows of d 32, 64 or 128 without a
// mean, packed (rows d apart) and 16-byte aligned. Fills their sign masks.
bool use_staged(const QuantizeProblem& p, kernels::Fp8RotateArgs* a) {
  const int64_t d = p.shape[3];
  if (p.rotation.kind != rotation::kHadamard || p.src_dtype != ZYFA_DTYPE_BF16 || p.smooth_mean != nullptr ||
      (d != 32 && d != 64 && d != 128))
    return false;
  const int64_t src_step = even_row_step(p.shape, p.src.stride), dst_step = even_row_step(p.shape, p.dst.stride);
  if (src_step != d || dst_step != d || a->src % 16 != 0 || a->dst % 16 != 0) return false;
  rotation::bf16_pair_sign_masks(p.rotation, static_cast<int>(d), a->sign_mask);
  return true;
}

}  // namespace

zyfa_status_t plan_quantize(const QuantizeProblem& p, void* partials, const char* backend, QuantizePlan* out) {
  const int64_t eb = p.src_dtype == ZYFA_DTYPE_FP32 ? 4 : 2;
  int64_t total = 1;
  for (int64_t s : p.shape) total *= s;
  if (total >= (int64_t{1} << 31))
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = {}: src has {} elements; the gfx950 quantize kernels take fewer than 2^31",
                backend, total);

  // Innermost first, size-1 dims dropped, then dims merged where both tensors are contiguous
  // across them: a contiguous tensor becomes one row.
  std::vector<Dim> dims;
  for (int i = 3; i >= 0; --i)
    if (p.shape[i] != 1 || (i == 3)) dims.push_back({p.shape[i], p.src.stride[i], p.dst.stride[i]});
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& m = merged.back();
      if (d.src_stride == m.src_stride * m.size && d.dst_stride == m.dst_stride * m.size) {
        m.size *= d.size;
        continue;
      }
    }
    merged.push_back(d);
  }
  while (merged.size() < 4) merged.push_back({1, 0, 0});
  // merged[0] has stride 1 for both (the last stride is 1 by validation).

  QuantizePlan plan{};
  plan.amax_kernel = eb == 4 ? "fp8_amax_f32" : "fp8_amax_bf16";
  plan.convert_kernel = eb == 4 ? "fp8_convert_f32" : "fp8_convert_bf16";
  kernels::Fp8AmaxArgs& a = plan.amax;
  a.src = address(p.src.data);
  a.partials = address(partials);
  for (int i = 0; i < 3; ++i) a.byte_stride[i] = merged[i + 1].src_stride * eb;
  for (int i = 0; i < 4; ++i) a.dim[i] = static_cast<uint32_t>(merged[i].size);
  a.total = static_cast<uint32_t>(total);
  for (int i = 0; i < 3; ++i) a.div_dim[i] = kernels::make_fast_div(a.dim[i]);

  // Convert: grid (row chunks, y, z) per launch; w and oversized y/z become more launches.
  const int64_t chunks = (merged[0].size + kernels::kConvertRowChunk - 1) / kernels::kConvertRowChunk;
  for (int64_t w = 0; w < merged[3].size; ++w)
    for (int64_t z0 = 0; z0 < merged[2].size; z0 += kMaxGridYZ)
      for (int64_t y0 = 0; y0 < merged[1].size; y0 += kMaxGridYZ) {
        ConvertLaunch l{};
        const int64_t src_off = (w * merged[3].src_stride + z0 * merged[2].src_stride + y0 * merged[1].src_stride) * eb;
        const int64_t dst_off = w * merged[3].dst_stride + z0 * merged[2].dst_stride + y0 * merged[1].dst_stride;
        l.args.src = address(p.src.data) + static_cast<uint64_t>(src_off);
        l.args.dst = address(p.dst.data) + static_cast<uint64_t>(dst_off);
        l.args.partials = address(partials);
        l.args.descale = address(p.descale);
        l.args.src_stride_y = merged[1].src_stride * eb;
        l.args.src_stride_z = merged[2].src_stride * eb;
        l.args.dst_stride_y = merged[1].dst_stride;
        l.args.dst_stride_z = merged[2].dst_stride;
        l.args.row_len = static_cast<uint32_t>(merged[0].size);
        l.grid[0] = static_cast<uint32_t>(chunks);
        l.grid[1] = static_cast<uint32_t>(std::min(kMaxGridYZ, merged[1].size - y0));
        l.grid[2] = static_cast<uint32_t>(std::min(kMaxGridYZ, merged[2].size - z0));
        plan.converts.push_back(l);
      }

  tensor_extents(p, eb, &plan.src_bytes, &plan.dst_bytes);
  *out = std::move(plan);
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t plan_rotate_quantize(const QuantizeProblem& p, void* scratch, const char* backend, RotatePlan* out) {
  const int64_t eb = p.src_dtype == ZYFA_DTYPE_FP32 ? 4 : 2;
  const int64_t rows = p.shape[0] * p.shape[1] * p.shape[2];
  if (rows * p.shape[3] >= (int64_t{1} << 31))
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = {}: src has {} elements; the gfx950 quantize kernels take fewer than 2^31",
                backend, rows * p.shape[3]);
  if (p.shape[3] > kernels::kRotTileElems)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "src.shape[3] = {}: the gfx950 quantize kernels with options take head_dim <= {}",
                p.shape[3], kernels::kRotTileElems);
  RotatePlan plan{};
  const bool f32 = eb == 4;
  plan.amax_kernel = p.static_descale != 0.0f ? nullptr : (f32 ? "fp8_rot_amax_f32" : "fp8_rot_amax_bf16");
  plan.convert_kernel = f32 ? "fp8_rot_convert_f32" : "fp8_rot_convert_bf16";
  plan.count_kernel = p.saturated != nullptr ? "fp8_rot_count" : nullptr;
  kernels::Fp8RotateArgs& a = plan.args;
  a.src = address(p.src.data);
  a.dst = address(p.dst.data);
  a.partials = address(scratch);
  a.counts = address(scratch) + kernels::kRotWorkgroups * sizeof(uint32_t);
  a.descale = address(p.descale);
  a.saturated = address(p.saturated);
  a.mean = address(p.smooth_mean);
  for (int i = 0; i < 3; ++i) {
    a.src_stride[i] = p.src.stride[i];
    a.dst_stride[i] = p.dst.stride[i];
  }
  a.rows = static_cast<uint32_t>(rows);
  a.head_dim = static_cast<uint32_t>(p.shape[3]);
  a.heads = static_cast<uint32_t>(p.shape[2]);
  a.seqlen = static_cast<uint32_t>(p.shape[1]);
  // Whole rows per tile; a tile of 2^k-value blocks keeps every butterfly inside its row.
  a.rows_per_tile = static_cast<uint32_t>(kernels::kRotTileElems / p.shape[3]);
  a.tiles = static_cast<uint32_t>((rows + a.rows_per_tile - 1) / a.rows_per_tile);
  a.div_heads = kernels::make_fast_div(a.heads);
  a.div_seqlen = kernels::make_fast_div(a.seqlen);
  a.div_head_dim = kernels::make_fast_div(a.head_dim);
  a.static_descale = p.static_descale;
  a.static_inv = p.static_inv;
  a.rot = p.rotation;
  a.workgroups = kernels::kRotWorkgroups;
  if (use_staged(p, &a)) {
    static const char* const kAmax[] = {"fp8_rot_staged_amax_d32", "fp8_rot_staged_amax_d64", "fp8_rot_staged_amax_d128"};
    static const char* const kConvert[] = {"fp8_rot_staged_convert_d32", "fp8_rot_staged_convert_d64",
                                           "fp8_rot_staged_convert_d128"};
    static const char* const kConvertCount[] = {"fp8_rot_staged_convert_count_d32", "fp8_rot_staged_convert_count_d64",
                                                "fp8_rot_staged_convert_count_d128"};
    const int which = p.shape[3] == 32 ? 0 : p.shape[3] == 64 ? 1 : 2;
    const bool counted = p.static_descale != 0.0f && p.saturated != nullptr;  // only a static descale saturates
    plan.amax_kernel = p.static_descale != 0.0f ? nullptr : kAmax[which];
    plan.convert_kernel = counted ? kConvertCount[which] : kConvert[which];
    // At least two groups of 64 rows per wave where the rows allow it: each wave's second
    // load is in flight while it transforms the first.
    const int64_t groups = (rows + 63) / 64;
    const int64_t waves = kernels::kRotThreads / 64;
    a.workgroups = static_cast<uint32_t>(std::clamp<int64_t>((groups + 2 * waves - 1) / (2 * waves), 1, kernels::kRotWorkgroups));
  }

  tensor_extents(p, eb, &plan.src_bytes, &plan.dst_bytes);
  plan.mean_bytes = p.smooth_mean ? static_cast<size_t>(p.shape[2] * p.shape[3]) * sizeof(float) : 0;
  *out = plan;
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa::amd
