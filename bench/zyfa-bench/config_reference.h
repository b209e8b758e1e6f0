// The fp64 references of one configuration's sampled rows (sampled_error.h): batch 0 at fixed
// lengths (the bottom-right mask when there are more keys than queries), and a few whole
// sequences of a varlen batch, each read from its first packed row.
#pragma once

#include <memory>
#include <vector>

#include "bench_config.h"
#include "sampled_error.h"

namespace zyfa::bench {

class ConfigReference {
 public:
  // in: the whole (packed) inputs of c, with batch, seqlen and heads as c's.
  ConfigReference(const Config& c, const SampledInputs& in);
  bool ok() const;
  // out: the kernel's whole output (bshd, BF16 or e4m3 codes); lse: (B, H, S) or, varlen,
  // (H, total_q), or null. worst_row is a packed row for a varlen batch.
  SampledError compare(const void* out, bool out_fp8, const float* lse) const;
  size_t sequences() const { return parts_.size(); }

 private:
  struct Part {
    int64_t row0;  // first packed row of the sequence (0 at fixed lengths)
    std::unique_ptr<SampledReference> ref;
  };
  std::vector<Part> parts_;
  int64_t heads_, d_v_;
};

}  // namespace zyfa::bench
