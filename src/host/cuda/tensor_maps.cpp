// Tensor maps of q, k and v: 4-D (head_dim, seqlen, heads, batch) views with the caller's
// strides, so any bshd/bhsd/packed layout is read in place; rows past seqlen read as zeros.
// Varlen calls map the packed tensors as one batch of total_q / total_k rows.
#include "host/cuda/tensor_maps.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <mutex>

#include "host/error.h"
#include "kernels/cuda/fwd_launch.h"
#include "kernels/varlen/varlen_jobs.h"

namespace zyfa::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult result{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault,
                                         &result) == cudaSuccess &&
        result == cudaDriverEntryPointSuccess) {
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
    }
  });
  return fn;
}

struct MapSpec {
  const char* name;
  const View* view;
  int64_t head_dim;
  int64_t heads;
  int64_t rows;  // seqlen of q or k/v; varlen: the packed tensor's rows
};

// The (rows, batch) extents the maps address: fixed lengths per sequence, or varlen sequences
// packed along the rows of one batch.
int64_t map_batch(const FwdProblem& p) { return p.varlen() ? 1 : p.batch; }
MapSpec q_spec(const FwdProblem& p) { return {"q", &p.q, p.d_qk, p.heads, p.varlen() ? p.total_q : p.seqlen}; }
MapSpec k_spec(const FwdProblem& p) { return {"k", &p.k, p.d_qk, p.heads_k, p.varlen() ? p.total_k : p.seqlen_k}; }
MapSpec v_spec(const FwdProblem& p) { return {"v", &p.v, p.d_v, p.heads_k, p.varlen() ? p.total_k : p.seqlen_k}; }

int64_t elem_bytes(const FwdProblem& p) { return p.in_dtype == ZYFA_DTYPE_FP8_E4M3 ? 1 : 2; }

// Byte stride of dimension i (1..3 = seqlen, heads, batch); a dimension of size 1 is never
// stepped, so its stride is replaced by one the copy engine accepts.
uint64_t byte_stride(const View& v, int i, int64_t extent, int64_t elem) {
  if (extent == 1) return 16;
  return static_cast<uint64_t>(v.stride[i]) * static_cast<uint64_t>(elem);
}

zyfa_status_t check_one(const FwdProblem& p, const MapSpec& m) {
  const int64_t elem = elem_bytes(p);
  if (reinterpret_cast<uintptr_t>(m.view->data) % 16 != 0) {
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "backend = cuda: {}.data = {}: the Hopper kernels read inputs with the bulk tensor copy, "
                "which needs 16-byte aligned addresses",
                m.name, m.view->data);
  }
  const int64_t extents[4] = {map_batch(p), m.rows, m.heads, m.head_dim};
  if (m.rows > (int64_t{1} << 31) - kFwdBlockM) {
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "backend = cuda: {}.shape[1] = {}: the bulk tensor copy addresses rows with 32-bit coordinates", m.name,
                m.rows);
  }
  for (int i = 0; i < 3; ++i) {
    if (extents[i] == 1) continue;
    if ((m.view->stride[i] * elem) % 16 != 0) {
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = cuda: {}.stride[{}] = {} ({} bytes): the bulk tensor copy needs strides that "
                  "are multiples of 16 bytes",
                  m.name, i, m.view->stride[i], m.view->stride[i] * elem);
    }
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t encode(const FwdProblem& p, const MapSpec& m, uint32_t box_inner, CUtensorMapSwizzle swizzle,
                     CUtensorMap* map) {
  const auto fn = encode_fn();
  if (fn == nullptr) {
    return fail(ZYFA_STATUS_RUNTIME_ERROR,
                "backend = cuda: the driver does not provide cuTensorMapEncodeTiled (driver too old?)");
  }
  const int64_t elem = elem_bytes(p);
  const int64_t batch = map_batch(p);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(m.head_dim), static_cast<cuuint64_t>(m.rows),
                              static_cast<cuuint64_t>(m.heads), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {byte_stride(*m.view, 1, m.rows, elem),
                                 byte_stride(*m.view, 2, m.heads, elem),
                                 byte_stride(*m.view, 0, batch, elem)};
  const cuuint32_t box[4] = {box_inner, static_cast<cuuint32_t>(kFwdBlockM), 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type = elem == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r = fn(map, type, 4, m.view->data, dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "backend = cuda: cuTensorMapEncodeTiled rejected {} (data {}, strides {}/{}/{} bytes): CUresult {}",
                m.name, m.view->data, strides[0], strides[1], strides[2], static_cast<int>(r));
  }
  return ZYFA_STATUS_SUCCESS;
}

// vᵀ of the FP8 pre-pass: (keys, d, heads_k, batch) with rows padded to 128 keys. The pre-pass
// permutes keys within groups of 16 and writes whole groups (zeros for keys past seqlen), so
// the map covers whole groups; columns past them read as zeros. Varlen: one batch whose rows
// hold every sequence's groups (fwd_vt_columns); the kernel masks what lies between them.
zyfa_status_t encode_vt(const FwdProblem& p, const void* vt, CUtensorMap* map) {
  const auto fn = encode_fn();
  if (fn == nullptr) {
    return fail(ZYFA_STATUS_RUNTIME_ERROR,
                "backend = cuda: the driver does not provide cuTensorMapEncodeTiled (driver too old?)");
  }
  const uint64_t row = static_cast<uint64_t>(fwd_vt_columns(p));
  const uint64_t keys = p.varlen() ? row : static_cast<uint64_t>((p.seqlen_k + 15) / 16 * 16);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(keys), static_cast<cuuint64_t>(p.d_v),
                              static_cast<cuuint64_t>(p.heads_k), static_cast<cuuint64_t>(map_batch(p))};
  const cuuint64_t strides[3] = {row, row * p.d_v, row * p.d_v * p.heads_k};
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(kFwdBlockN), static_cast<cuuint32_t>(p.d_v), 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void*>(vt), dims, strides, box,
                        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return fail(ZYFA_STATUS_INTERNAL_ERROR, "backend = cuda: cuTensorMapEncodeTiled rejected the vT workspace: CUresult {}",
                static_cast<int>(r));
  }
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace

int64_t fwd_vt_columns(const FwdProblem& p) {
  return p.varlen() ? varlen::group_columns(p.total_k, static_cast<int32_t>(p.batch), kFwdBlockN)
                    : fwd_vt_seqlen_pad(p.seqlen_k);
}

size_t fwd_vt_bytes(const FwdProblem& p) {
  return static_cast<size_t>(map_batch(p)) * static_cast<size_t>(p.heads_k) * static_cast<size_t>(p.d_v) *
         static_cast<size_t>(fwd_vt_columns(p));
}

zyfa_status_t check_tensor_maps_supported(const FwdProblem& p) {
  const MapSpec specs[3] = {q_spec(p), k_spec(p), v_spec(p)};
  for (const MapSpec& m : specs) {
    const zyfa_status_t s = check_one(p, m);
    if (s != ZYFA_STATUS_SUCCESS) return s;
  }
  if (reinterpret_cast<uintptr_t>(p.out.data) % 4 != 0 || p.out.stride[0] % 2 != 0 ||
      p.out.stride[1] % 2 != 0 || p.out.stride[2] % 2 != 0) {
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "backend = cuda: out.data = {}, out.stride = ({}, {}, {}): the kernels store pairs of "
                "BF16 values, which needs a 4-byte aligned output with even strides",
                p.out.data, p.out.stride[0], p.out.stride[1], p.out.stride[2]);
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t encode_fwd_tensor_maps(const FwdProblem& p, const void* vt, CUtensorMap* q, CUtensorMap* k,
                                     CUtensorMap* v) {
  const bool fp8 = p.in_dtype == ZYFA_DTYPE_FP8_E4M3;
  // q/k: column chunks whose rows are 128 bytes (128 B swizzle) or, for FP8 d_qk = 192, 64
  // bytes (64 B swizzle), matching the kernel's wgmma descriptors. v: BF16 64-column chunks;
  // FP8 whole 128-byte rows for the in-kernel transpose.
  const int chunk = fwd_tuning(fp8, static_cast<int>(p.d_qk)).qk_chunk;
  const CUtensorMapSwizzle qk_swizzle =
      chunk * (fp8 ? 1 : 2) == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  zyfa_status_t s = encode(p, q_spec(p), chunk, qk_swizzle, q);
  if (s != ZYFA_STATUS_SUCCESS) return s;
  s = encode(p, k_spec(p), chunk, qk_swizzle, k);
  if (s != ZYFA_STATUS_SUCCESS) return s;
  if (!fp8) return encode(p, v_spec(p), 64, CU_TENSOR_MAP_SWIZZLE_128B, v);
  return encode_vt(p, vt, v);
}

}  // namespace zyfa::cuda
