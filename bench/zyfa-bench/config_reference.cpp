#include "config_reference.h"

#include <algorithm>

#include "varlen.h"

namespace zyfa::bench {
namespace {

// The sequences sampled in a varlen batch: the first and the last non-empty ones (the ends of
// the packing) and the longest (the most keys per row).
std::vector<size_t> sampled_sequences(const std::vector<int64_t>& lens) {
  std::vector<size_t> s;
  for (size_t i = 0; i < lens.size(); ++i) {
    if (lens[i] > 0) {
      s.push_back(i);
      break;
    }
  }
  for (size_t i = lens.size(); i-- > 0;) {
    if (lens[i] > 0) {
      s.push_back(i);
      break;
    }
  }
  s.push_back(static_cast<size_t>(std::max_element(lens.begin(), lens.end()) - lens.begin()));
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

const void* advance(const void* p, int64_t bytes) { return static_cast<const uint8_t*>(p) + bytes; }

}  // namespace

ConfigReference::ConfigReference(const Config& c, const SampledInputs& in) : heads_(c.heads), d_v_(c.d_v) {
  if (!c.varlen()) {
    SampledInputs s = in;
    s.seqlen_k = c.seqlen_k;
    parts_.push_back(Part{0, std::make_unique<SampledReference>(s)});
    return;
  }
  const std::vector<int32_t> cu_q = prefix_sums(c.lens_q), cu_k = prefix_sums(c.lens_k);
  const int64_t elem = in.fp8 ? 1 : 2;
  for (size_t b : sampled_sequences(c.lens_q)) {
    SampledInputs s = in;
    s.batch = 1;
    s.seqlen = c.lens_q[b];
    s.seqlen_k = c.lens_k[b];
    s.lse_stride = c.seqlen;  // LSE (H, total_q)
    s.q = advance(in.q, cu_q[b] * c.heads * c.d_qk * elem);
    s.k = advance(in.k, cu_k[b] * c.heads_k * c.d_qk * elem);
    s.v = advance(in.v, cu_k[b] * c.heads_k * c.d_v * elem);
    parts_.push_back(Part{cu_q[b], std::make_unique<SampledReference>(s)});
  }
}

bool ConfigReference::ok() const {
  return std::all_of(parts_.begin(), parts_.end(), [](const Part& p) { return p.ref->ok(); });
}

SampledError ConfigReference::compare(const void* out, bool out_fp8, const float* lse) const {
  SampledError all;
  for (const Part& p : parts_) {
    SampledError e = p.ref->compare(advance(out, p.row0 * heads_ * d_v_ * (out_fp8 ? 1 : 2)), out_fp8,
                                    lse ? lse + p.row0 : nullptr);
    if (e.rows == 0) return SampledError{};  // a read failed
    e.worst_row += p.row0;
    all = merge(all, e);
  }
  return all;
}

}  // namespace zyfa::bench
