#include "bench_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "varlen.h"

namespace zyfa::bench {

std::string Config::name() const {
  std::string shape;
  if (varlen()) {
    const int64_t extra = lens_k.front() - lens_q.front();
    shape = fmt::format("Varlen{}_T{}{}", lens_q.size(), seqlen, extra ? fmt::format("_Kx{}", extra) : "");
  } else {
    shape = fmt::format("S{}{}_B{}", seqlen, seqlen_k != seqlen ? fmt::format("_K{}", seqlen_k) : "", batch);
  }
  return fmt::format("{}_D{}{}_{}_{}_H{}", dtype == ZYFA_DTYPE_BF16 ? "Bf16" : "Fp8", d_qk,
                     d_v == d_qk ? "" : fmt::format("v{}", d_v),
                     heads == heads_k ? "Mha" : fmt::format("Gqa{}", heads / heads_k), shape, heads);
}

int64_t Config::pairs() const {
  if (!varlen()) return batch * causal_pairs(seqlen, seqlen_k);
  int64_t p = 0;
  for (size_t i = 0; i < lens_q.size(); ++i) p += causal_pairs(lens_q[i], lens_k[i]);
  return p;
}

double Config::flops() const {
  return 2.0 * static_cast<double>(pairs()) * static_cast<double>(d_qk + d_v) * static_cast<double>(heads);
}

Config equal_work_config(const Config& c) {
  Config e = c;
  e.lens_q.clear();
  e.lens_k.clear();
  e.equal_work = false;
  e.batch = 1;
  e.seqlen = e.seqlen_k = equal_work_seqlen(c.pairs());
  return e;
}

Config equal_batch_config(const Config& c) {
  Config e = equal_work_config(c);
  const int64_t n = static_cast<int64_t>(c.lens_q.size());
  const int64_t extra = c.lens_k.front() - c.lens_q.front();
  e.batch = n;
  e.seqlen = equal_batch_seqlen(c.pairs(), n, extra);
  e.seqlen_k = e.seqlen + extra;
  return e;
}

zyfa_fwd_desc_t fwd_desc(const Config& c, void* q, void* k, void* v, void* out, const int32_t* cu_q,
                         const int32_t* cu_k, zyfa_backend_t backend) {
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  d.q = zyfa_tensor_bshd(q, c.dtype, c.batch, c.seqlen, c.heads, c.d_qk);
  d.k = zyfa_tensor_bshd(k, c.dtype, c.batch, c.seqlen_k, c.heads_k, c.d_qk);
  d.v = zyfa_tensor_bshd(v, c.dtype, c.batch, c.seqlen_k, c.heads_k, c.d_v);
  d.out = zyfa_tensor_bshd(out, ZYFA_DTYPE_BF16, c.batch, c.seqlen, c.heads, c.d_v);
  d.backend = backend;
  if (c.varlen()) {
    d.cu_seqlens_q = cu_q;
    d.cu_seqlens_k = cu_k;
    d.varlen_batch = static_cast<int32_t>(c.lens_q.size());
    d.max_seqlen_q = static_cast<int32_t>(*std::max_element(c.lens_q.begin(), c.lens_q.end()));
    d.max_seqlen_k = static_cast<int32_t>(*std::max_element(c.lens_k.begin(), c.lens_k.end()));
  }
  return d;
}

}  // namespace zyfa::bench
