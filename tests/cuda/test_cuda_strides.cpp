// Output views with gaps on the cuda backend: every kernel writes exactly the elements of the
// view, whether its rows start on 16 bytes (the FP8 d 128 kernels then send rows out as bulk
// copies from shared memory) or only on 4 (every kernel stores from registers).
#include <gtest/gtest.h>

#include <cstdio>

#include "cuda_test_util.h"
#include "support/padded_rows.h"

namespace zyfa::test {
namespace {

struct StridesCase {
  zyfa_dtype_t dtype;
  int64_t d_qk;
  int64_t pad;  // after each head's row and each sequence row; 2 leaves rows on 4 bytes only
  std::string name() const {
    return std::string(dtype == ZYFA_DTYPE_FP8_E4M3 ? "Fp8" : "Bf16") + "_D" + std::to_string(d_qk) +
           "_Pad" + std::to_string(pad);
  }
};

class CudaStrides : public ::testing::TestWithParam<StridesCase> {};

TEST_P(CudaStrides, PaddedOutputWritesOnlyItsElements) {
  ZYFA_SKIP_WITHOUT_CUDA();
  const StridesCase sc = GetParam();
  AttnConfig c = AttnConfig::of(sc.dtype, sc.d_qk, 4, 2, 300).with_batch(2).with(Inputs::GAUSSIAN, 1.0);
  c.seed = seed_for("CudaStrides." + sc.name());
  const AttnData a = make_attn_data(c);
  const ReferenceResult ref = reference_fp64(a);
  DeviceCase dev(a);
  ASSERT_TRUE(dev.ok()) << "device buffers";

  const OutView view = padded_out_view(c, sc.pad, sc.pad, 1000);
  std::vector<uint16_t> out(view.elems);
  poison_bf16(out.data(), out.size());
  void* d_out = nullptr;
  ZYFA_CUDA_OK(cudaMalloc(&d_out, out.size() * 2));
  ZYFA_CUDA_OK(cudaMemcpy(d_out, out.data(), out.size() * 2, cudaMemcpyHostToDevice));
  ASSERT_TRUE(copies_landed());
  zyfa_fwd_desc_t d = dev.desc();
  d.out.data = d_out;
  for (int i = 0; i < 3; ++i) d.out.stride[i] = view.stride[i];
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_CUDA_OK(cudaDeviceSynchronize());
  zyfa_destroy(h);
  ZYFA_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * 2, cudaMemcpyDeviceToHost));
  cudaFree(d_out);
  std::vector<uint16_t> o;
  std::vector<float> lse;
  dev.download(&o, &lse);
  ASSERT_TRUE(dev.ok());

  std::vector<uint16_t> dense;
  EXPECT_EQ(gather_out_view(a, view, out, &dense), 0) << "elements written outside the output view";
  const CheckResult r = check_output(a, ref, dense.data(), lse.data());
  EXPECT_TRUE(r.ok()) << sc.name() << " seed " << c.seed << ": " << r.summary();
  std::printf("%s seed %llu: %s\n", sc.name().c_str(), static_cast<unsigned long long>(c.seed),
              r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(, CudaStrides,
                         ::testing::Values(StridesCase{ZYFA_DTYPE_FP8_E4M3, 128, 8}, StridesCase{ZYFA_DTYPE_FP8_E4M3, 128, 2},
                                           StridesCase{ZYFA_DTYPE_FP8_E4M3, 192, 8}, StridesCase{ZYFA_DTYPE_FP8_E4M3, 192, 2},
                                           StridesCase{ZYFA_DTYPE_BF16, 128, 8}, StridesCase{ZYFA_DTYPE_BF16, 128, 2}),
                         [](const ::testing::TestParamInfo<StridesCase>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
