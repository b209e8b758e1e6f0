#include "support/fwd_matrix.h"

namespace zyfa::test {

std::vector<AttnConfig> fwd_matrix(const FwdMatrixSizes& z) {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    for (int64_t s : z.sweep) v.push_back(C::of(dt, 128, z.sweep_heads, z.sweep_heads_k, s));
    v.push_back(C::of(dt, 192, 8, 2, z.large));
    v.push_back(C::of(dt, 192, 2, 2, z.small));
    v.push_back(C::of(dt, 128, 3, 3, z.small));  // MHA
    v.push_back(C::of(dt, 128, 5, 1, z.small));  // MQA
    v.push_back(C::of(dt, 192, 4, 1, z.small));
    v.push_back(C::of(dt, 128, 4, 2, z.small).with(Layout::BHSD));
    v.push_back(C::of(dt, 192, 4, 2, z.small).with(Layout::BHSD));
    v.push_back(C::of(dt, 128, 4, 2, z.small).with(Layout::PACKED_QKV));
    v.push_back(C::of(dt, 128, 2, 1, z.mid).with(Inputs::GAUSSIAN, 1.0));
    v.push_back(C::of(dt, 128, 4, 2, z.large).with(Inputs::REALISTIC));
    v.push_back(C::of(dt, 192, 2, 1, z.mid).with(Inputs::REALISTIC));
    // A new row maximum in every key block: every kernel's rescaling path each time.
    v.push_back(C::of(dt, 128, 2, 1, z.mid).with(Inputs::RISING));
    v.push_back(C::of(dt, 192, 2, 1, z.mid).with(Inputs::RISING));
    v.push_back(C::of(dt, 128, 4, 2, z.small).with_batch(3));
    v.push_back(C::of(dt, 128, 2, 2, z.small).without_lse());
  }
  const auto fp8 = ZYFA_DTYPE_FP8_E4M3;
  v.push_back(C::of(fp8, 128, 4, 2, z.small).with(DescaleMode::DEVICE_SCALAR).with_batch(2));
  v.push_back(C::of(fp8, 128, 4, 2, z.small).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(fp8, 192, 6, 3, z.small).with(Layout::BHSD).with(Inputs::GAUSSIAN, 1.0)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(3));
  v.push_back(C::of(fp8, 128, 4, 1, z.small).with(Layout::PACKED_QKV).with(Inputs::REALISTIC)
                  .with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  AttnConfig scaled = C::of(ZYFA_DTYPE_BF16, 128, 2, 1, z.small).with(Inputs::GAUSSIAN, 1.0);
  scaled.softmax_scale = 0.25f;
  v.push_back(scaled);
  return v;
}

std::vector<AttnConfig> unseen_nan_matrix(int64_t seqlen, int64_t heads, int64_t heads_k) {
  using C = AttnConfig;
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    v.push_back(C::of(dt, 128, heads, heads_k, seqlen));
    v.push_back(C::of(dt, 192, heads, heads_k, seqlen));
    v.push_back(C::of(dt, 128, 2, 2, 77).with(Layout::BHSD).with_batch(2));
  }
  return v;
}

std::vector<AttnConfig> large_scores_matrix(int64_t seqlen) {
  std::vector<AttnConfig> v;
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    v.push_back(AttnConfig::of(dt, 128, 2, 1, seqlen));
    v.push_back(AttnConfig::of(dt, 192, 2, 1, seqlen));
  }
  return v;
}

}  // namespace zyfa::test
