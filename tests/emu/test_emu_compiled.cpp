// Kernels compiled by clang for gfx950 (tests/emu/hip/compiled_kernels.hip), run to the end
// and held to an fp64 CPU computation: a private array in scratch, register spills to scratch,
// a private array read by a called function through the private aperture, and loads through a
// swizzled buffer resource.
#include <cmath>
#include <random>
#include <utility>

#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

std::vector<uint32_t> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = f2u(d(rng));
  return v;
}

// |got - want| within 1e-5 of the sum of the terms' magnitudes (fp32 rounding of 100-odd terms).
void expect_close(uint32_t got_bits, double want, double magnitude, uint32_t lane) {
  const float got = u2f(got_bits);
  ASSERT_TRUE(std::isfinite(got)) << "lane " << lane;
  EXPECT_NEAR(got, want, 1e-5 * magnitude + 1e-30) << "lane " << lane;
}

// Every test draws fresh inputs from a fresh seed, named in each of its failures.
class EmuCompiled : public ::testing::Test {
 protected:
  const TestKernels k{"compiled_kernels"};
  const uint64_t seed = std::random_device{}();
  const ::testing::ScopedTrace trace{__FILE__, __LINE__, "seed " + std::to_string(seed)};
};

// Sum over i < n of x(i) * (i + 1), with the sum of the terms' magnitudes.
template <typename X>
std::pair<double, double> weighted_sum(uint32_t n, X x) {
  double s = 0, m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const double term = x(i) * (i + 1);
    s += term;
    m += std::fabs(term);
  }
  return {s, m};
}

// A completed run whose lane t holds the sum want(t) = {value, magnitude} in out[t].
template <typename Want>
void expect_lane_sums(const TestKernels::Run& r, Want want) {
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t t = 0; t < 64; ++t) {
    const auto [s, m] = want(t);
    expect_close(r.out[t], s, m, t);
  }
}

TEST_F(EmuCompiled, PrivateArrayInScratch) {
  const auto in = random_floats(64 * 48, seed);
  const uint32_t kk = 5 + uint32_t(seed % 7);
  const auto r = k.run("private_array", 64, in, {kk}, 64, 1, seed);
  EXPECT_GE(r.result.stats.scratch_lane_bytes, 192u);
  expect_lane_sums(r, [&](uint32_t t) {
    return weighted_sum(48, [&](uint32_t i) { return double(u2f(in[t * 48 + (i * kk + t) % 48])); });
  });
}

TEST_F(EmuCompiled, RegisterSpillsToScratch) {
  const auto in = random_floats(64 * 96, seed);
  const auto r = k.run("spill", 64, in, {}, 64, 1, seed);
  EXPECT_GT(r.result.stats.scratch_used_bytes, 0u);
  expect_lane_sums(r, [&](uint32_t t) {
    std::vector<double> x(96);
    for (int i = 0; i < 96; ++i) x[i] = u2f(in[t * 96 + i]);
    double s = 0, m = 0;
    for (int i = 0; i < 96; ++i) {
      s = s * 0.5 + x[i] * x[95 - i];
      m = m * 0.5 + std::fabs(x[i] * x[95 - i]);
    }
    for (int i = 0; i < 96; ++i) {
      s += x[(i * 7) % 96] * i;
      m += std::fabs(x[(i * 7) % 96] * i);
    }
    return std::pair{s, m};
  });
}

TEST_F(EmuCompiled, PrivatePointerThroughACall) {
  const auto in = random_floats(64 * 64, seed);
  const uint32_t kk = 3 + uint32_t(seed % 11);
  expect_lane_sums(k.run("private_pointer_call", 64, in, {kk}, 64, 1, seed), [&](uint32_t t) {
    return weighted_sum(64, [&](uint32_t i) { return double(u2f(in[t * 64 + ((i * kk) & 63)])); });
  });
}

TEST_F(EmuCompiled, SwizzledBufferLoad) {
  const auto in = random_floats(2048, seed);
  const auto r = k.run("swizzled_load", 64, in, {}, 64, 1, seed);
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t t = 0; t < 64; ++t) {
    // No index: offset 4 t + 4 = (t + 1) elements, each index-stride (16) elements apart, + soffset 8.
    const uint32_t byte = 8 + (t + 1) * 4 * 16;
    EXPECT_EQ(r.out[t], in[byte / 4]) << "lane " << t;
  }
}

}  // namespace
}  // namespace zyfa::emu::test
