/**
 * @file zyfa.h
 * @brief ZYFA: causal prefill attention (FP8 e4m3 and BF16) — the C API.
 *
 * Usable from C11 and C++. Every function returns a ::zyfa_status_t; on any
 * status other than ::ZYFA_STATUS_SUCCESS, nothing has been written to any
 * output and zyfa_last_error() names the offending field and value.
 * No C++ exception ever crosses this boundary.
 */
#ifndef ZYFA_ZYFA_H
#define ZYFA_ZYFA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zyfa/export.h"
#include "zyfa/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Result of every API call. The numeric values are pinned and never change. */
typedef enum zyfa_status_t {
  ZYFA_STATUS_SUCCESS = 0,          /**< The call did what was asked. */
  ZYFA_STATUS_INVALID_ARGUMENT = 1, /**< A descriptor field is malformed; see zyfa_last_error(). */
  ZYFA_STATUS_NOT_SUPPORTED = 2,    /**< Well-formed, but this configuration or backend is not implemented. */
  ZYFA_STATUS_NO_DEVICE = 3,        /**< The backend was built, but no usable device is present. */
  ZYFA_STATUS_OUT_OF_MEMORY = 4,    /**< A host or device allocation failed. */
  ZYFA_STATUS_RUNTIME_ERROR = 5,    /**< The GPU runtime (HIP or CUDA) reported an error. */
  ZYFA_STATUS_KERNEL_FAULT = 6,     /**< The emulator stopped a kernel (bad access, hazard, unknown instruction). */
  ZYFA_STATUS_INTERNAL_ERROR = 7    /**< A bug in ZYFA; please report it with zyfa_last_error(). */
} zyfa_status_t;

/** @brief Element types. 0 is deliberately invalid so that an unset field is caught. */
typedef enum zyfa_dtype_t {
  ZYFA_DTYPE_INVALID = 0,
  ZYFA_DTYPE_BF16 = 1,     /**< bfloat16. */
  ZYFA_DTYPE_FP8_E4M3 = 2, /**< OCP FP8 e4m3fn: max 448, no infinities, 0x7F/0xFF are NaN. */
  ZYFA_DTYPE_FP32 = 3      /**< IEEE binary32 (accepted by zyfa_fp8_quantize() as a source). */
} zyfa_dtype_t;

/** @brief Where a call runs. Pointers in a descriptor must live where the backend runs. */
typedef enum zyfa_backend_t {
  ZYFA_BACKEND_AUTO = 0, /**< CUDA if a device is present, else HIP if one is present, else CPU. */
  ZYFA_BACKEND_CPU = 1,  /**< Host threads, fp64 accumulation; host memory. */
  ZYFA_BACKEND_HIP = 2,  /**< AMD Instinct MI355X (gfx950); device memory. */
  ZYFA_BACKEND_EMU = 3,  /**< The gfx950 code objects run by the built-in emulator; host memory. */
  ZYFA_BACKEND_CUDA = 4  /**< NVIDIA Hopper (sm_90a); device memory. */
} zyfa_backend_t;

/**
 * @brief A strided 4-D view. The logical order is always (batch, seqlen, heads, head_dim);
 * strides are in elements, in the same order. bshd, bhsd and slices of packed qkv are all
 * just strides. The last stride (head_dim) must be 1.
 */
typedef struct zyfa_tensor_t {
  void* data;          /**< First element. Inputs are only read. */
  zyfa_dtype_t dtype;  /**< Element type. */
  int64_t shape[4];    /**< (batch, seqlen, heads, head_dim). */
  int64_t stride[4];   /**< Element strides for the same four dimensions. */
} zyfa_tensor_t;

/** @brief How a descale (the factor mapping an FP8 tensor back to its range) is given. */
typedef enum zyfa_descale_kind_t {
  ZYFA_DESCALE_NONE = 0,   /**< 1.0. Required for BF16 inputs. */
  ZYFA_DESCALE_HOST = 1,   /**< zyfa_descale_t::value, a positive normal float. */
  ZYFA_DESCALE_DEVICE = 2  /**< Read by the kernel from zyfa_descale_t::ptr; never read on the host. */
} zyfa_descale_kind_t;

/**
 * @brief One descale per FP8 input. A device descale is a float32 array indexed
 * (batch, head_k) with the given element strides; strides of 0 broadcast one value
 * (flash-attn 3's (batch, heads_k) shape, or a single scalar). Its values are not
 * checked: each must be a positive normal float.
 */
typedef struct zyfa_descale_t {
  zyfa_descale_kind_t kind;
  float value;            /**< For ::ZYFA_DESCALE_HOST. */
  const float* ptr;       /**< For ::ZYFA_DESCALE_DEVICE: memory of the call's backend. */
  int64_t stride_batch;   /**< Element stride over batch (0 = broadcast). */
  int64_t stride_head_k;  /**< Element stride over KV heads (0 = broadcast). */
} zyfa_descale_t;

/**
 * @brief Forward attention descriptor. Initialize with ::ZYFA_FWD_DESC_INIT (or
 * zyfa_fwd_desc_init()) so that struct_size and the defaults are set, then fill in fields.
 */
typedef struct zyfa_fwd_desc_t {
  uint32_t struct_size;  /**< sizeof(zyfa_fwd_desc_t) of the header the caller compiled against. */
  int32_t causal;        /**< Must be 1: causal mask aligned bottom-right (see below). Default 1. */
  zyfa_tensor_t q;       /**< (B, S_q, H, d_qk), BF16 or FP8. B = 0 or H = 0: an empty call (zyfa_fwd()). */
  zyfa_tensor_t k;       /**< (B, S_k, H_k, d_qk), same dtype as q; H % H_k == 0; S_k >= S_q. */
  zyfa_tensor_t v;       /**< (B, S_k, H_k, d_v), same dtype as q. */
  zyfa_tensor_t out;     /**< (B, S_q, H, d_v), BF16; a nested layout (docs/api.md, "Overlap"); must not overlap an input. */
  float* lse;            /**< Optional (B, H, S_q) contiguous float32 (varlen: (H, total_q)): natural-log sum-exp of scaled scores. */
  float softmax_scale;   /**< Scale of q·k; 0 means 1/sqrt(d_qk). */
  zyfa_descale_t q_descale; /**< For FP8 inputs; ::ZYFA_DESCALE_NONE means 1. */
  zyfa_descale_t k_descale;
  zyfa_descale_t v_descale;
  void* stream;          /**< hipStream_t / cudaStream_t; NULL = default stream. Ignored on CPU/EMU. */
  zyfa_backend_t backend; /**< Where to run; ::ZYFA_BACKEND_AUTO picks the best one present. */
  /* Appended later: a caller compiled against the older header passes the older struct_size
   * and gets the defaults below (fixed lengths). */
  /** Varlen batch: NULL for fixed lengths. Otherwise varlen_batch + 1 int32 prefix sums in the
   *  backend's memory (device memory on GPUs, read only by the kernel): sequence b holds rows
   *  cu_seqlens_q[b] .. cu_seqlens_q[b+1] of q and out, whose shapes are then (1, total_q, H, d).
   *  Set both or neither. */
  const int32_t* cu_seqlens_q;
  const int32_t* cu_seqlens_k; /**< The same for k and v, shapes (1, total_k, H_k, d). */
  int32_t varlen_batch;  /**< Number of sequences with cu_seqlens (0: an empty call); 0 otherwise. */
  int32_t max_seqlen_q;  /**< Upper bound of every query length (sizes the grid; a graph replays with any lengths under it). */
  int32_t max_seqlen_k;  /**< Upper bound of every key length. */
} zyfa_fwd_desc_t;

/**
 * @brief Initializer for an automatic ::zyfa_fwd_desc_t: struct_size set, causal = 1,
 * everything else zero (`zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;`).
 */
#define ZYFA_FWD_DESC_INIT zyfa_fwd_desc_default()

/**
 * @brief An orthogonal matrix R applied by zyfa_fp8_quantize() to the last dimension before
 * rounding: each row x becomes x·R. Rotating q and k by the same R keeps (qR)(kR)ᵀ = qkᵀ while
 * spreading outlier channels over all channels. Exact definitions: docs/api.md, "Rotation".
 */
typedef enum zyfa_rotation_t {
  ZYFA_ROTATION_NONE = 0,            /**< No rotation. */
  ZYFA_ROTATION_HADAMARD = 1,        /**< diag(s)·H_d/√d, Sylvester H_d, d a power of two (32 to 256). */
  ZYFA_ROTATION_DCT3_HADAMARD64 = 2  /**< d = 192: diag(s)·(C3ᵀ ⊗ H_64)/8, C3 the orthonormal 3-point DCT-II. */
} zyfa_rotation_t;

/**
 * @brief FP8 quantization descriptor; initialize with ::ZYFA_QUANTIZE_DESC_INIT.
 * The fields from rotation on were appended later: a caller compiled against the older header
 * passes the older struct_size and gets their defaults (no rotation, no smoothing, computed
 * descale).
 */
typedef struct zyfa_quantize_desc_t {
  uint32_t struct_size;  /**< sizeof(zyfa_quantize_desc_t). */
  zyfa_tensor_t src;     /**< BF16 or FP32, any 4-D shape, last stride 1. */
  zyfa_tensor_t dst;     /**< FP8 e4m3, same shape as src, must not overlap it. */
  float* descale;        /**< One float32 in the backend's memory: receives the descale used. */
  void* stream;          /**< As in ::zyfa_fwd_desc_t. */
  zyfa_backend_t backend;
  zyfa_rotation_t rotation; /**< Rotation of the last dimension (default none). */
  uint64_t rotation_seed;   /**< Seed of R's random signs: same seed, same R on every backend. */
  /** Optional (heads, head_dim) contiguous float32 in the backend's memory, subtracted from
   *  every row of head h before rotating (K smoothing). NULL: none. */
  const float* smooth_mean;
  /** 0: the descale is computed from the data (power of two, no saturation). Otherwise a
   *  positive normal float used as is: no amax pass, values saturate to ±448. */
  float static_descale;
  /** Optional uint32 in the backend's memory: receives how many values saturated (0 unless
   *  static_descale is set). NULL: not counted. */
  uint32_t* saturated;
} zyfa_quantize_desc_t;

/** @brief Initializer for an automatic ::zyfa_quantize_desc_t (struct_size set, rest zero). */
#define ZYFA_QUANTIZE_DESC_INIT zyfa_quantize_desc_default()

/**
 * @brief The alignment a backend's attention kernels need, in bytes, beyond the element
 * alignment that every backend needs (see zyfa_backend_alignment()). For a tensor X with
 * rule a: X.data and the byte strides X.stride[i] * element size of batch, seqlen and heads
 * (i = 0, 1, 2) must all be multiples of a; otherwise zyfa_fwd() returns
 * ::ZYFA_STATUS_NOT_SUPPORTED naming the field. 1 means no rule beyond the element size.
 * Meeting these rules is enough: a backend may accept a stride that breaks them on a
 * dimension of extent 1 (cuda does), never a pointer.
 */
typedef struct zyfa_alignment_t {
  uint32_t struct_size;    /**< sizeof(zyfa_alignment_t); set by ::ZYFA_ALIGNMENT_INIT. */
  zyfa_backend_t backend;  /**< The concrete backend the rules below are for. */
  uint32_t q;              /**< Rule of q (hip/emu 16, cuda 16, cpu 1). */
  uint32_t k;              /**< Rule of k (hip/emu 16, cuda 16, cpu 1). */
  uint32_t v;              /**< Rule of v (hip/emu 1, cuda 16, cpu 1). */
  uint32_t out;            /**< Rule of out (hip/emu 8, cuda 4, cpu 1). */
} zyfa_alignment_t;

/** @brief Initializer for a ::zyfa_alignment_t to be filled by zyfa_backend_alignment(). */
#define ZYFA_ALIGNMENT_INIT zyfa_alignment_default()

/**
 * @brief Opaque handle: caches loaded modules and job tables. Thread-safe: any number of
 * threads may call into one handle at once (any streams, per-thread streams included), each
 * call giving the result it gives alone; only zyfa_destroy() must not overlap another call.
 */
typedef struct zyfa_handle* zyfa_handle_t;

/** @brief A forward descriptor with its defaults (see ::ZYFA_FWD_DESC_INIT). */
static inline zyfa_fwd_desc_t zyfa_fwd_desc_default(void) {
  zyfa_fwd_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = (uint32_t)sizeof(zyfa_fwd_desc_t);
  d.causal = 1;
  return d;
}

/** @brief A quantize descriptor with its defaults (see ::ZYFA_QUANTIZE_DESC_INIT). */
static inline zyfa_quantize_desc_t zyfa_quantize_desc_default(void) {
  zyfa_quantize_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = (uint32_t)sizeof(zyfa_quantize_desc_t);
  return d;
}

/** @brief An alignment record with struct_size set (see ::ZYFA_ALIGNMENT_INIT). */
static inline zyfa_alignment_t zyfa_alignment_default(void) {
  zyfa_alignment_t a;
  memset(&a, 0, sizeof a);
  a.struct_size = (uint32_t)sizeof(zyfa_alignment_t);
  return a;
}

/** @brief Fill a descriptor with the defaults of ::ZYFA_FWD_DESC_INIT. */
static inline void zyfa_fwd_desc_init(zyfa_fwd_desc_t* desc) { *desc = zyfa_fwd_desc_default(); }

/** @brief Describe a contiguous (batch, seqlen, heads, head_dim) tensor. */
static inline zyfa_tensor_t zyfa_tensor_bshd(void* data, zyfa_dtype_t dtype, int64_t batch,
                                             int64_t seqlen, int64_t heads, int64_t head_dim) {
  zyfa_tensor_t t;
  t.data = data;
  t.dtype = dtype;
  t.shape[0] = batch; t.shape[1] = seqlen; t.shape[2] = heads; t.shape[3] = head_dim;
  t.stride[3] = 1;
  t.stride[2] = head_dim;
  t.stride[1] = heads * head_dim;
  t.stride[0] = seqlen * heads * head_dim;
  return t;
}

/** @brief Describe a contiguous (batch, heads, seqlen, head_dim) buffer; the logical order stays bshd. */
static inline zyfa_tensor_t zyfa_tensor_bhsd(void* data, zyfa_dtype_t dtype, int64_t batch,
                                             int64_t seqlen, int64_t heads, int64_t head_dim) {
  zyfa_tensor_t t = zyfa_tensor_bshd(data, dtype, batch, seqlen, heads, head_dim);
  t.stride[1] = head_dim;
  t.stride[2] = seqlen * head_dim;
  t.stride[0] = heads * seqlen * head_dim;
  return t;
}

/** @brief A host descale. */
static inline zyfa_descale_t zyfa_descale_host(float value) {
  zyfa_descale_t d = {ZYFA_DESCALE_HOST, value, NULL, 0, 0};
  return d;
}

/** @brief A device descale: one float32 broadcast to every (batch, head_k). */
static inline zyfa_descale_t zyfa_descale_device(const float* ptr) {
  zyfa_descale_t d = {ZYFA_DESCALE_DEVICE, 0.0f, ptr, 0, 0};
  return d;
}

/** @brief Text of a status value ("success", "invalid argument", ...); never NULL. */
ZYFA_API const char* zyfa_status_string(zyfa_status_t status);

/**
 * @brief Message of the last failed call on this thread, naming the field and value
 * ("q.shape[3] = 64: head_dim must be 128 or 192"); "" after a successful call.
 * Valid until the next ZYFA call on this thread.
 */
ZYFA_API const char* zyfa_last_error(void);

/** @brief Name of a backend ("auto", "cpu", "hip", "emu", "cuda"); "unknown" otherwise. */
ZYFA_API const char* zyfa_backend_name(zyfa_backend_t backend);

/** @brief Library version as "MAJOR.MINOR.PATCH" (of the library loaded, not the header). */
ZYFA_API const char* zyfa_version_string(void);

/** @brief Create a handle. @param[out] handle receives it. */
ZYFA_API zyfa_status_t zyfa_create(zyfa_handle_t* handle);

/** @brief Destroy a handle; NULL is accepted. Work already queued on streams is unaffected. */
ZYFA_API zyfa_status_t zyfa_destroy(zyfa_handle_t handle);

/**
 * @brief Is a backend usable here? ::ZYFA_STATUS_SUCCESS if so; else NOT_SUPPORTED (not built)
 * or NO_DEVICE, with the reason in zyfa_last_error(). With AUTO, writes the backend AUTO picks.
 * @param[out] resolved optional; receives the concrete backend.
 */
ZYFA_API zyfa_status_t zyfa_backend_query(zyfa_handle_t handle, zyfa_backend_t backend,
                                          zyfa_backend_t* resolved);

/**
 * @brief The alignment rules of a backend's attention kernels (see ::zyfa_alignment_t), so a
 * caller can lay out buffers before the call. The rules belong to the kernels: a concrete
 * backend is answered whether or not it is built or has a device here; AUTO is resolved as by
 * zyfa_backend_query() and fails as it does.
 * @param[in,out] alignment struct_size set (::ZYFA_ALIGNMENT_INIT); receives the rules.
 */
ZYFA_API zyfa_status_t zyfa_backend_alignment(zyfa_handle_t handle, zyfa_backend_t backend,
                                              zyfa_alignment_t* alignment);

/**
 * @brief Causal attention forward: out = softmax(scale · q kᵀ + causal mask) v.
 * Stream-ordered on GPU backends. The first call of a new shape uploads its job table with one
 * blocking copy (see zyfa_fwd_prepare()); later calls never wait for the device.
 * A call with batch = 0 or heads = 0 is validated like any other and its backend resolved, then
 * returns ::ZYFA_STATUS_SUCCESS having written nothing; the data of a tensor of no element may be
 * NULL. Layouts off the backend's alignment rules (zyfa_backend_alignment()) are NOT_SUPPORTED.
 *
 * The causal mask is aligned bottom-right, as in flash-attn >= 2.1: query i of a sequence of
 * S_q queries and S_k >= S_q keys sees keys j <= i + S_k - S_q (chunked prefill: the queries are
 * the last S_q positions). With fixed lengths S_k < S_q is NOT_SUPPORTED. With cu_seqlens every
 * length may differ, 0 included; on host-memory backends (cpu, emu) the prefix sums are checked
 * (non-decreasing, within the tensors and maxima) before anything is written. A row that sees no
 * key (a sequence with fewer keys than queries) gets zeros and LSE = -inf. Every backend runs them;
 * on hip and emu, views whose k or v rows are not 16-byte aligned return
 * ::ZYFA_STATUS_NOT_SUPPORTED for them (docs/api.md, "Varlen").
 */
ZYFA_API zyfa_status_t zyfa_fwd(zyfa_handle_t handle, const zyfa_fwd_desc_t* desc);

/**
 * @brief Do the per-shape host work of zyfa_fwd() now (validation, job-table upload, module
 * load), so that a later zyfa_fwd() with the same shapes can be captured in a HIP/CUDA graph.
 * Reads no tensor data and writes no output.
 */
ZYFA_API zyfa_status_t zyfa_fwd_prepare(zyfa_handle_t handle, const zyfa_fwd_desc_t* desc);

/**
 * @brief Quantize src to FP8 e4m3 with one descale per tensor. Without options: descale =
 * 2^ceil(log2(amax/448)) (1 when amax is 0), dst = RNE(src / descale). With smooth_mean or a
 * rotation, each row is first transformed in float32 (y = (x − mean)·R, a fixed order of
 * operations, docs/api.md) and y is quantized instead; with static_descale, dst =
 * RNE(y · fp32(1/static_descale)) saturated to ±448. The descale is written to device memory
 * by the device, so the host never waits. Non-finite inputs give a NaN descale (computed) or
 * NaN codes (static).
 */
ZYFA_API zyfa_status_t zyfa_fp8_quantize(zyfa_handle_t handle, const zyfa_quantize_desc_t* desc);

/**
 * @brief The matrix R that zyfa_fp8_quantize() applies for (rotation, head_dim, seed), exact
 * values rounded once to float32: out[i * head_dim + j] = R[i][j], and a row x becomes x·R.
 * Host memory; no handle or device needed. INVALID_ARGUMENT for ::ZYFA_ROTATION_NONE, a
 * head_dim the rotation does not take, or a NULL out.
 */
ZYFA_API zyfa_status_t zyfa_rotation_matrix(zyfa_rotation_t rotation, int64_t head_dim, uint64_t seed,
                                            float* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZYFA_ZYFA_H */
