// Output views with gaps: the cpu backend writes exactly the elements of the view.
#include <gtest/gtest.h>

#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

TEST(Strides, PaddedOutputWritesOnlyItsElements) {
  AttnConfig c;
  c.dtype = ZYFA_DTYPE_FP8_E4M3;
  c.heads = 4;
  c.heads_k = 2;
  c.seqlen = 70;
  c.batch = 2;
  c.seed = seed_for("Strides.PaddedOutput");
  AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);

  // Rows of the output padded by 40 elements, heads by 8, batches by 1000.
  const int64_t dv = c.d_v, hs = dv + 8, ss = c.heads * hs + 40, bs = c.seqlen * ss + 1000;
  std::vector<uint16_t> out(c.batch * bs);
  std::vector<float> lse(a.lse_count());
  poison_bf16(out.data(), out.size());
  poison_f32(lse.data(), lse.size());
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  d.out.stride[0] = bs;
  d.out.stride[1] = ss;
  d.out.stride[2] = hs;
  d.backend = ZYFA_BACKEND_CPU;
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);

  // Gather the view into the contiguous layout the checker expects, and require every
  // element outside the view to still hold the poison.
  std::vector<uint16_t> dense(a.out_count());
  std::vector<bool> in_view(out.size(), false);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t hh = 0; hh < c.heads; ++hh)
        for (int64_t i = 0; i < dv; ++i) {
          const int64_t off = b * bs + s * ss + hh * hs + i;
          in_view[off] = true;
          dense[a.out_offset(b, s, hh, i)] = out[off];
        }
  int64_t stray = 0;
  for (size_t i = 0; i < out.size(); ++i) stray += !in_view[i] && !is_poison_bf16(out[i]);
  EXPECT_EQ(stray, 0) << "elements written outside the output view";
  const CheckResult r = check_output(a, ref, dense.data(), lse.data(), cpu_tolerance());
  EXPECT_TRUE(r.ok()) << "seed " << c.seed << ": " << r.summary();
}

}  // namespace
}  // namespace zyfa::test
