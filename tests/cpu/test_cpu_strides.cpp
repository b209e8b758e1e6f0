// Output views with gaps: the cpu backend writes exactly the elements of the view.
#include <gtest/gtest.h>

#include "support/padded_rows.h"
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
  const OutView view = padded_out_view(c, 8, 40, 1000);
  std::vector<uint16_t> out(view.elems);
  std::vector<float> lse(a.lse_count());
  poison_bf16(out.data(), out.size());
  poison_f32(lse.data(), lse.size());
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  for (int i = 0; i < 3; ++i) d.out.stride[i] = view.stride[i];
  d.backend = ZYFA_BACKEND_CPU;
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);

  // Every element outside the view must still hold the poison.
  std::vector<uint16_t> dense;
  EXPECT_EQ(gather_out_view(a, view, out, &dense), 0) << "elements written outside the output view";
  const CheckResult r = check_output(a, ref, dense.data(), lse.data(), cpu_tolerance());
  EXPECT_TRUE(r.ok()) << "seed " << c.seed << ": " << r.summary();
}

}  // namespace
}  // namespace zyfa::test
