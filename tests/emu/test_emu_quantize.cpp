// The AMD FP8 quantize kernels (amax, convert) on the emulator through zyfa_fp8_quantize:
// codes and descale bitwise equal to the cpu backend (an independent host implementation of
// the same rule: descale = 2^ceil(log2(amax/448)), codes = RNE(src / descale)), for FP32 and
// BF16 sources, several sizes (tails of the kernels' vector loops) and interleavings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

struct Result {
  zyfa_status_t status;
  std::string error;
  std::vector<uint8_t> codes;
  float descale;
};

Result quantize(zyfa_backend_t backend, const void* src, zyfa_dtype_t dtype, int64_t rows, int64_t n) {
  Result r{ZYFA_STATUS_INTERNAL_ERROR, "", std::vector<uint8_t>(size_t(rows * n), 0xAA), -1.0f};
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return r;
  zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
  d.src = zyfa_tensor_bshd(const_cast<void*>(src), dtype, 1, rows, 1, n);
  d.dst = zyfa_tensor_bshd(r.codes.data(), ZYFA_DTYPE_FP8_E4M3, 1, rows, 1, n);
  d.descale = &r.descale;
  d.backend = backend;
  r.status = zyfa_fp8_quantize(h, &d);
  r.error = zyfa_last_error();
  zyfa_destroy(h);
  return r;
}

class Quantize : public ::testing::TestWithParam<std::tuple<zyfa_dtype_t, int64_t>> {};

TEST_P(Quantize, EmuMatchesCpuBitwise) {
  const auto [dtype, n] = GetParam();
  const uint64_t seed = test_seed() ^ uint64_t(n);
  std::printf("n=%lld dtype=%d seed %llu\n", (long long)n, int(dtype), (unsigned long long)seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 3.0);
  const int64_t rows = 3;
  std::vector<float> f(size_t(rows * n));
  for (float& x : f) x = float(nd(rng));
  std::vector<uint16_t> b(f.size());
  for (size_t i = 0; i < f.size(); ++i) {  // bf16 by truncation: exact inputs for both backends
    uint32_t u;
    std::memcpy(&u, &f[i], 4);
    b[i] = uint16_t(u >> 16);
  }
  const void* src = dtype == ZYFA_DTYPE_FP32 ? static_cast<const void*>(f.data()) : b.data();
  const Result cpu = quantize(ZYFA_BACKEND_CPU, src, dtype, rows, n);
  ASSERT_EQ(cpu.status, ZYFA_STATUS_SUCCESS) << cpu.error;
  for (uint64_t interleave : {1ull, 77ull}) {
    setenv("ZYFA_EMU_SEED", std::to_string(interleave).c_str(), 1);
    const Result emu = quantize(ZYFA_BACKEND_EMU, src, dtype, rows, n);
    ASSERT_EQ(emu.status, ZYFA_STATUS_SUCCESS) << emu.error;
    EXPECT_EQ(emu.descale, cpu.descale);
    EXPECT_EQ(0, std::memcmp(emu.codes.data(), cpu.codes.data(), cpu.codes.size())) << "codes differ";
  }
}

INSTANTIATE_TEST_SUITE_P(Emu, Quantize,
                         ::testing::Combine(::testing::Values(ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16),
                                            ::testing::Values<int64_t>(1, 37, 1000, 4099)),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param) == ZYFA_DTYPE_FP32 ? "F32" : "Bf16") + "_N" +
                                  std::to_string(std::get<1>(i.param));
                         });

}  // namespace
}  // namespace zyfa::test
