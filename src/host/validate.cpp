#include "host/validate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "host/error.h"

namespace zyfa {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 31;  // keeps every element offset within int64

const char* dtype_name(zyfa_dtype_t d) {
  switch (d) {
    case ZYFA_DTYPE_BF16: return "BF16";
    case ZYFA_DTYPE_FP8_E4M3: return "FP8_E4M3";
    case ZYFA_DTYPE_FP32: return "FP32";
    default: return "INVALID";
  }
}

size_t dtype_size(zyfa_dtype_t d) {
  switch (d) {
    case ZYFA_DTYPE_BF16: return 2;
    case ZYFA_DTYPE_FP8_E4M3: return 1;
    case ZYFA_DTYPE_FP32: return 4;
    default: return 0;
  }
}

bool known_backend(zyfa_backend_t b) { return b >= ZYFA_BACKEND_AUTO && b <= ZYFA_BACKEND_CUDA; }

bool is_empty(const int64_t shape[4]) {
  return shape[0] == 0 || shape[1] == 0 || shape[2] == 0 || shape[3] == 0;
}

// Byte span [lo, hi) that a strided tensor touches; empty (lo == hi) for a tensor of no element.
// Overlap between tensors is judged on these bounding spans: conservative for interleaved
// tensors (docs/api.md states the rule).
struct Span {
  uintptr_t lo = 0, hi = 0;
};

Span span_of(const void* data, const int64_t shape[4], const int64_t stride[4], size_t elem) {
  if (is_empty(shape)) return {};
  int64_t last = 0;
  for (int i = 0; i < 4; ++i) last += (shape[i] - 1) * stride[i];
  const auto base = reinterpret_cast<uintptr_t>(data);
  return {base, base + static_cast<uintptr_t>(last + 1) * elem};
}

bool overlaps(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }

// Which dimensions may be 0: an attention call of no batch or no heads is a valid empty call;
// packed varlen tensors (batch 1) may hold no rows when every sequence is empty.
constexpr bool kFwdMayBeEmpty[4] = {true, false, true, false};
constexpr bool kVarlenMayBeEmpty[4] = {false, true, true, false};
constexpr bool kNeverEmpty[4] = {false, false, false, false};

// Shape, strides, pointer and dtype-independent rules of one tensor. The data of a tensor of no
// element may be NULL: it addresses nothing.
zyfa_status_t check_tensor(const char* name, const zyfa_tensor_t& t, const bool (&may_be_empty)[4]) {
  // NULL first, so an unset tensor reads as such; only a tensor empty by an allowed dimension
  // (seqlen and head_dim still >= 1) may omit its data.
  bool has_allowed_zero = false, others_positive = true;
  for (int i = 0; i < 4; ++i) {
    if (may_be_empty[i]) has_allowed_zero = has_allowed_zero || t.shape[i] == 0;
    else others_positive = others_positive && t.shape[i] >= 1;
  }
  const bool allowed_empty = has_allowed_zero && others_positive;
  if (t.data == nullptr && !allowed_empty) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.data is NULL", name);
  if (dtype_size(t.dtype) == 0)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.dtype = {}: not a zyfa_dtype_t value", name,
                static_cast<int>(t.dtype));
  static const char* dims[4] = {"batch", "seqlen", "heads", "head_dim"};
  for (int i = 0; i < 4; ++i) {
    const int64_t lowest = may_be_empty[i] ? 0 : 1;
    if (t.shape[i] < lowest || t.shape[i] > kMaxDim)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.shape[{}] = {}: {} must be in [{}, 2^31]", name, i,
                  t.shape[i], dims[i], lowest);
    if (t.stride[i] < 0 || t.stride[i] > (int64_t{1} << 40))
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.stride[{}] = {}: strides must be in [0, 2^40]",
                  name, i, t.stride[i]);
  }
  if (t.stride[3] != 1)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.stride[3] = {}: the head_dim stride must be 1", name,
                t.stride[3]);
  // The largest offset must stay far from int64 overflow (and the 2^63 byte address space).
  double extent = 0;
  for (int i = 0; i < 4; ++i) extent += double(std::max<int64_t>(t.shape[i] - 1, 0)) * double(t.stride[i]);
  if (extent > double(int64_t{1} << 56))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}: shape and strides address {:.3g} elements (limit 2^56)",
                name, extent);
  const size_t elem = dtype_size(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % elem != 0)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.data = {}: not aligned to its {}-byte elements", name,
                t.data, elem);
  return ZYFA_STATUS_SUCCESS;
}

// An output must not write any element twice. The rule is the nested-layout one (a permutation
// of the dimensions, each padded as it likes): sorted by stride, each stride must step past the
// extent of the smaller dimensions. It accepts every bshd/bhsd/padded/sliced layout and refuses
// every layout that writes an element twice, but also the rare interleaved layouts that write
// each element once (deciding those exactly is a bounded subset-sum problem); docs/api.md
// states the rule.
zyfa_status_t check_no_self_overlap(const char* name, const zyfa_tensor_t& t) {
  if (is_empty(t.shape)) return ZYFA_STATUS_SUCCESS;
  int order[4] = {0, 1, 2, 3};
  std::sort(order, order + 4, [&](int a, int b) { return t.stride[a] < t.stride[b]; });
  int64_t reach = 0;  // largest offset reachable by the dimensions seen so far
  for (int i : order) {
    if (t.shape[i] == 1) continue;
    if (t.stride[i] <= reach)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                  "{}.stride[{}] = {}: output elements may overlap (sorted by stride, each stride must "
                  "exceed {}, the last offset of the dimensions of smaller stride)", name, i,
                  t.stride[i], reach);
    reach += (t.shape[i] - 1) * t.stride[i];
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t check_descale(const char* name, const zyfa_descale_t& d, bool fp8, Descale* out) {
  switch (d.kind) {
    case ZYFA_DESCALE_NONE:
      *out = Descale{};
      return ZYFA_STATUS_SUCCESS;
    case ZYFA_DESCALE_HOST:
      if (!fp8)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "{}.kind = HOST: descales apply to FP8 inputs only (inputs are BF16)", name);
      if (!(std::isnormal(d.value) && d.value > 0.0f))
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.value = {}: must be a positive normal float", name,
                    d.value);
      *out = Descale{ZYFA_DESCALE_HOST, d.value, nullptr, 0, 0};
      return ZYFA_STATUS_SUCCESS;
    case ZYFA_DESCALE_DEVICE:
      if (!fp8)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "{}.kind = DEVICE: descales apply to FP8 inputs only (inputs are BF16)", name);
      if (d.ptr == nullptr) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.ptr is NULL", name);
      if (reinterpret_cast<uintptr_t>(d.ptr) % alignof(float) != 0)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.ptr = {}: not 4-byte aligned", name,
                    static_cast<const void*>(d.ptr));
      if (d.stride_batch < 0 || d.stride_head_k < 0 || d.stride_batch > kMaxDim ||
          d.stride_head_k > kMaxDim)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "{}.stride_batch = {}, {}.stride_head_k = {}: strides must be in [0, 2^31]", name,
                    d.stride_batch, name, d.stride_head_k);
      *out = Descale{ZYFA_DESCALE_DEVICE, 1.0f, d.ptr, d.stride_batch, d.stride_head_k};
      return ZYFA_STATUS_SUCCESS;
    default:
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.kind = {}: not a zyfa_descale_kind_t value", name,
                  static_cast<int>(d.kind));
  }
}

View view_of(const zyfa_tensor_t& t) {
  View v;
  v.data = t.data;
  std::memcpy(v.stride, t.stride, sizeof v.stride);
  return v;
}

#define ZYFA_TRY(expr)                                  \
  do {                                                  \
    const zyfa_status_t zyfa_try_status_ = (expr);      \
    if (zyfa_try_status_ != ZYFA_STATUS_SUCCESS) return zyfa_try_status_; \
  } while (0)

}  // namespace

// The descriptor before the varlen fields were appended: its fields end where cu_seqlens_q
// begins (the first pointer after backend starts at the old size, which was rounded up to 8).
constexpr size_t kFwdDescV1Size = offsetof(zyfa_fwd_desc_t, cu_seqlens_q);
static_assert(kFwdDescV1Size == (offsetof(zyfa_fwd_desc_t, backend) + sizeof(zyfa_backend_t) + 7) / 8 * 8,
              "zyfa_fwd_desc_t: the fields of the first version must keep their layout");

// Descriptor-level checks (NULL, struct_size, backend enum) before any field. Copies the
// caller's descriptor into a current one: an older caller's fields (the first old_fields bytes,
// those of a descriptor of old_size) over the defaults, so bytes past them are never read.
template <class Desc>
static zyfa_status_t read_versioned(const Desc* desc, uint32_t old_size, size_t old_fields, const char* init,
                                    Desc* full) {
  if (desc == nullptr) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc is NULL");
  if (desc->struct_size != sizeof(Desc) && desc->struct_size != old_size)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                "desc->struct_size = {}: unknown descriptor version (this library expects {} or {}; "
                "initialize with {})",
                desc->struct_size, sizeof(Desc), old_size, init);
  if (desc->struct_size == old_size) {
    std::memcpy(static_cast<void*>(full), desc, old_fields);
    full->struct_size = sizeof(Desc);
  } else {
    *full = *desc;
  }
  if (!known_backend(full->backend))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->backend = {}: not a zyfa_backend_t value",
                static_cast<int>(full->backend));
  return ZYFA_STATUS_SUCCESS;
}

static zyfa_status_t validate_fwd_header(const zyfa_fwd_desc_t* desc, zyfa_fwd_desc_t* full) {
  *full = zyfa_fwd_desc_default();
  return read_versioned(desc, static_cast<uint32_t>(kFwdDescV1Size), kFwdDescV1Size, "ZYFA_FWD_DESC_INIT", full);
}

// The varlen fields on their own: both prefix-sum pointers or neither, counts and maxima not
// negative, and packed tensors of batch 1. The lengths themselves live in the backend's memory
// and are checked by validate_fwd_lengths on host-memory backends.
static zyfa_status_t check_varlen_fields(const zyfa_fwd_desc_t& d) {
  const bool vq = d.cu_seqlens_q != nullptr, vk = d.cu_seqlens_k != nullptr;
  if (vq != vk)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->{} is NULL: set both cu_seqlens_q and cu_seqlens_k, or neither",
                vq ? "cu_seqlens_k" : "cu_seqlens_q");
  if (!vq) {
    const struct { const char* name; int32_t value; } unused[] = {
        {"varlen_batch", d.varlen_batch}, {"max_seqlen_q", d.max_seqlen_q}, {"max_seqlen_k", d.max_seqlen_k}};
    for (const auto& u : unused)
      if (u.value != 0)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->{} = {}: must be 0 without cu_seqlens_q (fixed lengths)",
                    u.name, u.value);
    return ZYFA_STATUS_SUCCESS;
  }
  const struct { const char* name; const int32_t* ptr; } arrays[] = {{"cu_seqlens_q", d.cu_seqlens_q},
                                                                      {"cu_seqlens_k", d.cu_seqlens_k}};
  for (const auto& a : arrays)
    if (reinterpret_cast<uintptr_t>(a.ptr) % alignof(int32_t) != 0)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->{} = {}: not 4-byte aligned", a.name,
                  static_cast<const void*>(a.ptr));
  const struct { const char* name; int32_t value; } counts[] = {
      {"varlen_batch", d.varlen_batch}, {"max_seqlen_q", d.max_seqlen_q}, {"max_seqlen_k", d.max_seqlen_k}};
  for (const auto& c : counts)
    if (c.value < 0) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->{} = {}: must be >= 0", c.name, c.value);
  const struct { const char* name; const zyfa_tensor_t& t; } tensors[] = {{"q", d.q}, {"k", d.k}, {"v", d.v}, {"out", d.out}};
  for (const auto& t : tensors)
    if (t.t.shape[0] != 1)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                  "{}.shape[0] = {}: must be 1 with cu_seqlens (sequences are packed along shape[1])", t.name,
                  t.t.shape[0]);
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t validate_fwd(const zyfa_fwd_desc_t* desc, FwdProblem* p) {
  zyfa_fwd_desc_t full;
  ZYFA_TRY(validate_fwd_header(desc, &full));
  const zyfa_fwd_desc_t& d = full;
  if (d.causal == 0)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "desc->causal = 0: only causal attention is implemented");
  if (d.causal != 1)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->causal = {}: must be 1", d.causal);

  const bool varlen = d.cu_seqlens_q != nullptr;
  const bool (&may_be_empty)[4] = varlen ? kVarlenMayBeEmpty : kFwdMayBeEmpty;
  ZYFA_TRY(check_tensor("q", d.q, may_be_empty));
  ZYFA_TRY(check_tensor("k", d.k, may_be_empty));
  ZYFA_TRY(check_tensor("v", d.v, may_be_empty));
  ZYFA_TRY(check_tensor("out", d.out, may_be_empty));
  ZYFA_TRY(check_varlen_fields(d));

  if (d.q.dtype != ZYFA_DTYPE_BF16 && d.q.dtype != ZYFA_DTYPE_FP8_E4M3)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "q.dtype = {}: inputs must be BF16 or FP8_E4M3",
                dtype_name(d.q.dtype));
  if (d.k.dtype != d.q.dtype)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "k.dtype = {}: differs from q.dtype = {}",
                dtype_name(d.k.dtype), dtype_name(d.q.dtype));
  if (d.v.dtype != d.q.dtype)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "v.dtype = {}: differs from q.dtype = {}",
                dtype_name(d.v.dtype), dtype_name(d.q.dtype));
  if (d.out.dtype != ZYFA_DTYPE_BF16)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "out.dtype = {}: the output must be BF16",
                dtype_name(d.out.dtype));

  const int64_t B = d.q.shape[0], S = d.q.shape[1], H = d.q.shape[2], Dqk = d.q.shape[3];
  const int64_t Hk = d.k.shape[2], Dv = d.v.shape[3];
  struct Expect {
    const char* name;
    int dim;
    int64_t got, want;
    const char* what;
  };
  const Expect expects[] = {
      {"k", 0, d.k.shape[0], B, "batch must match q.shape[0]"},
      {"v", 0, d.v.shape[0], B, "batch must match q.shape[0]"},
      {"out", 0, d.out.shape[0], B, "batch must match q.shape[0]"},
      {"v", 1, d.v.shape[1], d.k.shape[1], "seqlen_k must match k.shape[1]"},
      {"out", 1, d.out.shape[1], S, "seqlen must match q.shape[1]"},
      {"v", 2, d.v.shape[2], Hk, "heads_k must match k.shape[2]"},
      {"out", 2, d.out.shape[2], H, "heads must match q.shape[2]"},
      {"k", 3, d.k.shape[3], Dqk, "d_qk must match q.shape[3]"},
      {"out", 3, d.out.shape[3], Dv, "d_v must match v.shape[3]"},
  };
  for (const Expect& e : expects)
    if (e.got != e.want)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}.shape[{}] = {}: {} = {}", e.name, e.dim, e.got, e.what,
                  e.want);
  // With no query heads any heads_k (even 0) is an empty call.
  if (H != 0 && (Hk == 0 || H % Hk != 0))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                "k.shape[2] = {}: heads_k must divide the query heads q.shape[2] = {}", Hk, H);
  // Fixed lengths: the queries are the last S positions of S_k >= S keys (chunked prefill).
  // Fewer keys than queries would leave the first rows with no key to see; with cu_seqlens
  // such rows are defined (zeros), here the call is refused.
  if (!varlen && d.k.shape[1] < S)
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "k.shape[1] = {}: seqlen_k is below seqlen_q = {} (q.shape[1]); the causal mask is aligned "
                "bottom-right and needs seqlen_k >= seqlen_q",
                d.k.shape[1], S);
  if (!((Dqk == 128 && Dv == 128) || (Dqk == 192 && Dv == 128)))
    return fail(ZYFA_STATUS_NOT_SUPPORTED,
                "q.shape[3] = {}, v.shape[3] = {}: head dims (d_qk, d_v) must be (128, 128) or (192, 128)",
                Dqk, Dv);

  ZYFA_TRY(check_no_self_overlap("out", d.out));
  const Span so = span_of(d.out.data, d.out.shape, d.out.stride, 2);
  const zyfa_tensor_t* ins[3] = {&d.q, &d.k, &d.v};
  const char* in_names[3] = {"q", "k", "v"};
  const size_t in_elem = dtype_size(d.q.dtype);
  for (int i = 0; i < 3; ++i)
    if (overlaps(so, span_of(ins[i]->data, ins[i]->shape, ins[i]->stride, in_elem)))
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "out.data = {}: the output overlaps {}", d.out.data,
                  in_names[i]);
  if (d.lse != nullptr) {
    if (reinterpret_cast<uintptr_t>(d.lse) % alignof(float) != 0)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->lse = {}: not 4-byte aligned",
                  static_cast<void*>(d.lse));
    const auto lo = reinterpret_cast<uintptr_t>(d.lse);
    // (B, H, S), or (H, total_q) packed; empty when there is no row.
    const Span sl{lo, lo + static_cast<uintptr_t>(varlen ? H * S : B * H * S) * sizeof(float)};
    if (overlaps(sl, so))
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->lse = {}: overlaps out", static_cast<void*>(d.lse));
    for (int i = 0; i < 3; ++i)
      if (overlaps(sl, span_of(ins[i]->data, ins[i]->shape, ins[i]->stride, in_elem)))
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->lse = {}: overlaps {}", static_cast<void*>(d.lse),
                    in_names[i]);
  }

  if (varlen) {
    // The prefix sums are read while out and lse are written.
    const struct { const char* name; const int32_t* ptr; } arrays[] = {{"cu_seqlens_q", d.cu_seqlens_q},
                                                                        {"cu_seqlens_k", d.cu_seqlens_k}};
    const auto lo = reinterpret_cast<uintptr_t>(d.lse);
    const Span sl{lo, d.lse ? lo + static_cast<uintptr_t>(H * S) * sizeof(float) : lo};
    for (const auto& a : arrays) {
      const auto al = reinterpret_cast<uintptr_t>(a.ptr);
      const Span sa{al, al + (static_cast<uintptr_t>(d.varlen_batch) + 1) * sizeof(int32_t)};
      if (overlaps(sa, so) || overlaps(sa, sl))
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->{} = {}: overlaps out or lse", a.name,
                    static_cast<const void*>(a.ptr));
    }
  }

  float scale = d.softmax_scale;
  if (!std::isfinite(scale))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->softmax_scale = {}: must be finite", scale);
  if (scale == 0.0f) scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dqk)));

  const bool fp8 = d.q.dtype == ZYFA_DTYPE_FP8_E4M3;
  ZYFA_TRY(check_descale("q_descale", d.q_descale, fp8, &p->q_descale));
  ZYFA_TRY(check_descale("k_descale", d.k_descale, fp8, &p->k_descale));
  ZYFA_TRY(check_descale("v_descale", d.v_descale, fp8, &p->v_descale));

  p->in_dtype = d.q.dtype;
  p->batch = varlen ? d.varlen_batch : B;
  p->seqlen = varlen ? d.max_seqlen_q : S;
  p->seqlen_k = varlen ? d.max_seqlen_k : d.k.shape[1];
  if (varlen) {
    p->cu_seqlens_q = d.cu_seqlens_q;
    p->cu_seqlens_k = d.cu_seqlens_k;
    p->total_q = S;
    p->total_k = d.k.shape[1];
  }
  p->heads = H;
  p->heads_k = Hk;
  p->d_qk = Dqk;
  p->d_v = Dv;
  p->q = view_of(d.q);
  p->k = view_of(d.k);
  p->v = view_of(d.v);
  p->out = view_of(d.out);
  p->lse = d.lse;
  p->softmax_scale = scale;
  p->stream = d.stream;
  return ZYFA_STATUS_SUCCESS;
}

// Host-memory prefix sums: each array starts at 0 or above, never decreases, ends within its
// tensors' rows, and no sequence exceeds its maximum.
zyfa_status_t validate_fwd_lengths(const FwdProblem& p) {
  if (!p.varlen()) return ZYFA_STATUS_SUCCESS;
  const struct { const char* name; const int32_t* cu; int64_t rows; const char* tensor; int64_t max; const char* max_name; }
      arrays[] = {{"cu_seqlens_q", p.cu_seqlens_q, p.total_q, "q", p.seqlen, "max_seqlen_q"},
                  {"cu_seqlens_k", p.cu_seqlens_k, p.total_k, "k", p.seqlen_k, "max_seqlen_k"}};
  for (const auto& a : arrays) {
    if (a.cu[0] < 0)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}[0] = {}: prefix sums must start at 0 or above", a.name, a.cu[0]);
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = int64_t{a.cu[b + 1]} - a.cu[b];
      if (len < 0)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}[{}] = {}: below {}[{}] = {}; prefix sums must not decrease",
                    a.name, b + 1, a.cu[b + 1], a.name, b, a.cu[b]);
      if (len > a.max)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}[{}] - {}[{}] = {}: sequence {} is longer than {} = {}",
                    a.name, b + 1, a.name, b, len, b, a.max_name, a.max);
    }
    if (a.cu[p.batch] > a.rows)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "{}[{}] = {}: past the {} rows of {} ({}.shape[1])", a.name, p.batch,
                  a.cu[p.batch], a.rows, a.tensor, a.tensor);
  }
  return ZYFA_STATUS_SUCCESS;
}

// The descriptor before rotation and the fields after it were appended: its fields end where
// rotation begins (rotation fills what was tail padding), its size was 192 bytes.
constexpr uint32_t kQuantizeDescV1Size = 192;
constexpr size_t kQuantizeDescV1Fields = offsetof(zyfa_quantize_desc_t, rotation);
static_assert(kQuantizeDescV1Fields <= kQuantizeDescV1Size && kQuantizeDescV1Size < sizeof(zyfa_quantize_desc_t),
              "zyfa_quantize_desc_t: the fields of the first version must keep their layout");

static zyfa_status_t validate_quantize_header(const zyfa_quantize_desc_t* desc, zyfa_quantize_desc_t* full) {
  *full = zyfa_quantize_desc_default();
  return read_versioned(desc, kQuantizeDescV1Size, kQuantizeDescV1Fields, "ZYFA_QUANTIZE_DESC_INIT", full);
}

// The options appended to the descriptor: rotation, smoothing mean, static descale, counter.
static zyfa_status_t check_quantize_options(const zyfa_quantize_desc_t& d, Span sd, Span ss, Span sdesc,
                                            QuantizeProblem* p) {
  const int64_t hd = d.src.shape[3];
  switch (d.rotation) {
    case ZYFA_ROTATION_NONE:
      break;
    case ZYFA_ROTATION_HADAMARD:
      if ((hd & (hd - 1)) != 0)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "src.shape[3] = {}: ZYFA_ROTATION_HADAMARD needs a power-of-two head_dim", hd);
      if (hd < 32 || hd > rotation::kMaxDim)
        return fail(ZYFA_STATUS_NOT_SUPPORTED,
                    "src.shape[3] = {}: ZYFA_ROTATION_HADAMARD is implemented for head_dim 32 to {}", hd,
                    rotation::kMaxDim);
      break;
    case ZYFA_ROTATION_DCT3_HADAMARD64:
      if (hd != 192)
        return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                    "src.shape[3] = {}: ZYFA_ROTATION_DCT3_HADAMARD64 needs head_dim 192", hd);
      break;
    default:
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->rotation = {}: not a zyfa_rotation_t value",
                  static_cast<int>(d.rotation));
  }
  if (d.static_descale != 0.0f && !(std::isnormal(d.static_descale) && d.static_descale > 0.0f))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                "desc->static_descale = {}: must be a positive normal float (or 0 for a computed descale)",
                d.static_descale);
  if (d.smooth_mean != nullptr) {
    if (reinterpret_cast<uintptr_t>(d.smooth_mean) % alignof(float) != 0)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->smooth_mean = {}: not 4-byte aligned",
                  static_cast<const void*>(d.smooth_mean));
    const auto ml = reinterpret_cast<uintptr_t>(d.smooth_mean);
    const Span sm{ml, ml + static_cast<uintptr_t>(d.src.shape[2] * hd) * sizeof(float)};
    if (overlaps(sm, sd) || overlaps(sm, sdesc))
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->smooth_mean = {}: overlaps dst or descale",
                  static_cast<const void*>(d.smooth_mean));
  }
  if (d.saturated != nullptr) {
    if (reinterpret_cast<uintptr_t>(d.saturated) % alignof(uint32_t) != 0)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->saturated = {}: not 4-byte aligned",
                  static_cast<void*>(d.saturated));
    const auto cl = reinterpret_cast<uintptr_t>(d.saturated);
    const Span sc{cl, cl + sizeof(uint32_t)};
    if (overlaps(sc, sd) || overlaps(sc, ss) || overlaps(sc, sdesc))
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->saturated = {}: overlaps src, dst or descale",
                  static_cast<void*>(d.saturated));
    if (d.smooth_mean != nullptr) {
      const auto ml = reinterpret_cast<uintptr_t>(d.smooth_mean);
      if (overlaps(sc, Span{ml, ml + static_cast<uintptr_t>(d.src.shape[2] * hd) * sizeof(float)}))
        return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->saturated = {}: overlaps smooth_mean",
                    static_cast<void*>(d.saturated));
    }
  }
  p->rotation = rotation::make_params(static_cast<int>(d.rotation), static_cast<int>(hd), d.rotation_seed);
  p->smooth_mean = d.smooth_mean;
  p->static_descale = d.static_descale;
  p->static_inv = d.static_descale != 0.0f ? 1.0f / d.static_descale : 0.0f;
  p->saturated = d.saturated;
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t validate_quantize(const zyfa_quantize_desc_t* desc, QuantizeProblem* p) {
  zyfa_quantize_desc_t full;
  ZYFA_TRY(validate_quantize_header(desc, &full));
  const zyfa_quantize_desc_t& d = full;
  ZYFA_TRY(check_tensor("src", d.src, kNeverEmpty));
  ZYFA_TRY(check_tensor("dst", d.dst, kNeverEmpty));
  if (d.src.dtype != ZYFA_DTYPE_BF16 && d.src.dtype != ZYFA_DTYPE_FP32)
    return fail(ZYFA_STATUS_NOT_SUPPORTED, "src.dtype = {}: the source must be BF16 or FP32",
                dtype_name(d.src.dtype));
  if (d.dst.dtype != ZYFA_DTYPE_FP8_E4M3)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "dst.dtype = {}: the destination must be FP8_E4M3",
                dtype_name(d.dst.dtype));
  for (int i = 0; i < 4; ++i)
    if (d.dst.shape[i] != d.src.shape[i])
      return fail(ZYFA_STATUS_INVALID_ARGUMENT, "dst.shape[{}] = {}: must match src.shape[{}] = {}", i,
                  d.dst.shape[i], i, d.src.shape[i]);
  ZYFA_TRY(check_no_self_overlap("dst", d.dst));
  const Span sd = span_of(d.dst.data, d.dst.shape, d.dst.stride, 1);
  const Span ss = span_of(d.src.data, d.src.shape, d.src.stride, dtype_size(d.src.dtype));
  if (overlaps(sd, ss))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "dst.data = {}: the destination overlaps src", d.dst.data);
  if (d.descale == nullptr) return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->descale is NULL");
  if (reinterpret_cast<uintptr_t>(d.descale) % alignof(float) != 0)
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->descale = {}: not 4-byte aligned",
                static_cast<void*>(d.descale));
  const auto dl = reinterpret_cast<uintptr_t>(d.descale);
  const Span sdesc{dl, dl + sizeof(float)};
  if (overlaps(sdesc, sd) || overlaps(sdesc, ss))
    return fail(ZYFA_STATUS_INVALID_ARGUMENT, "desc->descale = {}: overlaps src or dst",
                static_cast<void*>(d.descale));
  ZYFA_TRY(check_quantize_options(d, sd, ss, sdesc, p));

  p->src_dtype = d.src.dtype;
  std::memcpy(p->shape, d.src.shape, sizeof p->shape);
  p->src = view_of(d.src);
  p->dst = view_of(d.dst);
  p->descale = d.descale;
  p->stream = d.stream;
  return ZYFA_STATUS_SUCCESS;
}

zyfa_alignment_t backend_alignment(zyfa_backend_t concrete) {
  zyfa_alignment_t a = zyfa_alignment_default();
  a.backend = concrete;
  a.q = a.k = a.v = a.out = 1;
  switch (concrete) {
    case ZYFA_BACKEND_HIP:
    case ZYFA_BACKEND_EMU:
      // As check_attn_supported enforces: q and k rows are read in 16-byte pieces, each lane
      // stores four BF16 outputs at once; v has no rule beyond its element size.
      a.q = a.k = 16;
      a.out = 8;
      break;
    case ZYFA_BACKEND_CUDA:
      // q, k and v are read by the bulk tensor copy (16-byte addresses and strides); outputs
      // are stored as BF16 pairs.
      a.q = a.k = a.v = 16;
      a.out = 4;
      break;
    default:
      break;
  }
  return a;
}

}  // namespace zyfa
