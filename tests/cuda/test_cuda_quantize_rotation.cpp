// zyfa_fp8_quantize's options on the cuda backend (fp8_rotate.cu): every case against the fp64
// rotation, and codes, descale and counter bitwise equal to the cpu backend (docs/api.md,
// "Quantize options"); row counts cover partial grids and the grid-stride loop. Skips without a
// Hopper GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cuda_test_util.h"
#include "support/rotation_quantize.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

RotMemory device_memory() {
  RotMemory m;
  m.alloc = [](size_t n) {
    void* p = nullptr;
    return cudaMalloc(&p, n) == cudaSuccess ? p : nullptr;
  };
  m.to_backend = [](void* dst, const void* src, size_t n) { cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice); };
  m.to_host = [](void* dst, const void* src, size_t n) { cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost); };
  m.release = [](void* p) { cudaFree(p); };
  return m;
}

RotCase make(zyfa_dtype_t dt, int64_t d, zyfa_rotation_t rot, bool smooth, bool stat, bool count, bool peaked,
             int64_t seqlen) {
  return RotCase::of(dt, d, rot, smooth, stat, count, peaked, 2, seqlen, 3);
}

const RotCase kCases[] = {
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, false, true, true, 37),
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, true, true, true, true, 2000),
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, true, true, false, 1),
    // Enough rows that every warp of the staged kernels goes round its double buffer.
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, true, true, true, 20000),
    make(ZYFA_DTYPE_BF16, 64, ZYFA_ROTATION_HADAMARD, false, false, false, false, 6001),
    make(ZYFA_DTYPE_FP32, 192, ZYFA_ROTATION_DCT3_HADAMARD64, true, true, true, true, 37),
    make(ZYFA_DTYPE_BF16, 192, ZYFA_ROTATION_DCT3_HADAMARD64, false, false, false, false, 300),
    make(ZYFA_DTYPE_BF16, 64, ZYFA_ROTATION_HADAMARD, true, false, false, false, 37),
    make(ZYFA_DTYPE_BF16, 32, ZYFA_ROTATION_HADAMARD, false, true, true, true, 37),
    make(ZYFA_DTYPE_FP32, 256, ZYFA_ROTATION_HADAMARD, false, false, false, true, 37),
    make(ZYFA_DTYPE_BF16, 256, ZYFA_ROTATION_HADAMARD, true, true, true, true, 37),
    make(ZYFA_DTYPE_BF16, 100, ZYFA_ROTATION_NONE, true, true, true, true, 37),
    make(ZYFA_DTYPE_FP32, 128, ZYFA_ROTATION_NONE, true, false, true, false, 37),
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, true, true, true, true, 37).as_bhsd(),
    make(ZYFA_DTYPE_FP32, 192, ZYFA_ROTATION_DCT3_HADAMARD64, false, false, true, true, 37).as_bhsd(),
};

class CudaRotQuantize : public ::testing::TestWithParam<RotCase> {};

TEST_P(CudaRotQuantize, MatchesFp64AndCpuBitwise) {
  ZYFA_SKIP_WITHOUT_CUDA();
  RotCase c = GetParam();
  c.seed = seed_for("cuda_" + c.name() + std::to_string(c.seqlen));
  std::printf("%s S=%lld seed %llu\n", c.name().c_str(), (long long)c.seqlen, (unsigned long long)c.seed);
  const RotInputs in = make_rot_inputs(c);
  const RotResult cpu = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  ASSERT_EQ(check_rot_result(c, in, cpu), "");
  const RotResult gpu = run_rot_quantize(ZYFA_BACKEND_CUDA, c, in, device_memory());
  EXPECT_EQ(check_rot_result(c, in, gpu), "");
  EXPECT_EQ(compare_rot_results(gpu, cpu), "") << "against the cpu backend";
}

// Non-finite sources (tests/support/rotation_quantize.h), static and computed descale.
TEST(CudaRotQuantizeNonFinite, MatchesCpuBitwise) {
  ZYFA_SKIP_WITHOUT_CUDA();
  for (const bool stat : {true, false}) EXPECT_EQ(nonfinite_rows_vs_cpu(ZYFA_BACKEND_CUDA, stat, device_memory()), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaRotQuantize, ::testing::ValuesIn(kCases),
                         [](const auto& i) { return i.param.name() + "_S" + std::to_string(i.param.seqlen); });

}  // namespace
}  // namespace zyfa::test
