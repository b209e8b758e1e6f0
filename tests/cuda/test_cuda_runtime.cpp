// Run-to-run behaviour of the cuda backend: bitwise determinism, CUDA graph capture and replay
// after zyfa_fwd_prepare, refusals that write nothing, and zyfa_fp8_quantize on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cuda_test_util.h"

namespace zyfa::test {
namespace {

AttnConfig small(zyfa_dtype_t dt, int64_t dq = 128) {
  AttnConfig c;
  c.dtype = dt;
  c.d_qk = dq;
  c.heads = 4;
  c.heads_k = 2;
  c.seqlen = 777;
  c.batch = 2;
  return c;
}

class CudaRuntime : public ::testing::TestWithParam<AttnConfig> {};

// 100 launches of the same inputs give bitwise identical outputs and LSE.
TEST_P(CudaRuntime, Determinism) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = GetParam();
  c.seed = seed_for(c.name() + "det");
  const AttnData a = make_attn_data(c);
  DeviceCase dev(a);
  ASSERT_TRUE(dev.ok());
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  const zyfa_fwd_desc_t d = dev.desc();
  std::vector<uint16_t> first_out, out;
  std::vector<float> first_lse, lse;
  int mismatches = 0;
  for (int i = 0; i < 100; ++i) {
    dev.poison();
    ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_CUDA_OK(cudaDeviceSynchronize());
    dev.download(&out, &lse);
    if (i == 0) {
      first_out = out;
      first_lse = lse;
      const ReferenceResult ref = reference_fp64(a);
      const CheckResult r = check_output(a, ref, out.data(), lse.data());
      ASSERT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
    } else if (std::memcmp(out.data(), first_out.data(), out.size() * 2) != 0 ||
               std::memcmp(lse.data(), first_lse.data(), lse.size() * 4) != 0) {
      ++mismatches;
    }
  }
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(mismatches, 0) << "launches differing bitwise from the first, of 99";
  zyfa_destroy(h);
}

// zyfa_fwd_prepare, then capture zyfa_fwd in a graph; replays on fresh inputs written into
// the same buffers must match the reference of those inputs.
TEST_P(CudaRuntime, GraphCaptureReplay) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = GetParam();
  c.seed = seed_for(c.name() + "graph");
  // Host descales are values of the descriptor, captured with the call, and each seed has its
  // own (amax near a power of two gives one seed twice another's): FP8 replays with new inputs
  // take device descales, uploaded with them (docs/api.md).
  if (c.dtype == ZYFA_DTYPE_FP8_E4M3) c.descale = DescaleMode::DEVICE_PER_HEAD;
  AttnData a = make_attn_data(c);
  DeviceCase dev(a);
  ASSERT_TRUE(dev.ok());
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  ZYFA_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const zyfa_fwd_desc_t d = dev.desc(stream);
  ASSERT_EQ(zyfa_fwd_prepare(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  cudaGraph_t graph = nullptr;
  ZYFA_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const zyfa_status_t captured = zyfa_fwd(h, &d);
  ZYFA_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(captured, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  cudaGraphExec_t exec = nullptr;
  ZYFA_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    c.seed = seed_for(c.name() + "graph" + std::to_string(replay));
    a = make_attn_data(c);
    dev.upload_inputs(a);
    dev.poison();
    ZYFA_CUDA_OK(cudaGraphLaunch(exec, stream));
    ZYFA_CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<uint16_t> out;
    std::vector<float> lse;
    dev.download(&out, &lse);
    ASSERT_TRUE(dev.ok());
    const CheckResult r = check_output(a, reference_fp64(a), out.data(), lse.data());
    EXPECT_TRUE(r.ok()) << "replay " << replay << " seed " << c.seed << ": " << r.summary();
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  zyfa_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(, CudaRuntime,
                         ::testing::Values(small(ZYFA_DTYPE_BF16), small(ZYFA_DTYPE_FP8_E4M3),
                                           small(ZYFA_DTYPE_BF16, 192), small(ZYFA_DTYPE_FP8_E4M3, 192)),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

// Capturing a shape that was never prepared is refused with a message, not a broken graph.
TEST(CudaRefusal, CaptureWithoutPrepare) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = small(ZYFA_DTYPE_BF16);
  c.seqlen = 555;
  c.seed = seed_for("CaptureWithoutPrepare");
  const AttnData a = make_attn_data(c);
  DeviceCase dev(a);
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  ZYFA_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const zyfa_fwd_desc_t d = dev.desc(stream);
  cudaGraph_t graph = nullptr;
  ZYFA_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const zyfa_status_t s = zyfa_fwd(h, &d);
  const std::string msg = zyfa_last_error();
  ZYFA_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  EXPECT_EQ(s, ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("zyfa_fwd_prepare"), std::string::npos) << msg;
  if (graph) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  zyfa_destroy(h);
}

// Strides the bulk tensor copy cannot address: NOT_SUPPORTED naming the field, nothing written.
TEST(CudaRefusal, MisalignedStrideWritesNothing) {
  ZYFA_SKIP_WITHOUT_CUDA();
  AttnConfig c = small(ZYFA_DTYPE_BF16);
  c.seed = seed_for("MisalignedStride");
  const AttnData a = make_attn_data(c);
  DeviceCase dev(a);
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_fwd_desc_t d = dev.desc();
  // Same tensor, read from one element further: the base address is no longer 16-byte aligned.
  d.q.data = static_cast<uint16_t*>(dev.q()) + 1;
  d.q.shape[1] -= 1;
  d.k.shape[1] -= 1;
  d.v.shape[1] -= 1;
  d.out.shape[1] -= 1;
  EXPECT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_NOT_SUPPORTED);
  EXPECT_NE(std::string(zyfa_last_error()).find("q.data"), std::string::npos) << zyfa_last_error();
  ZYFA_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> out;
  std::vector<float> lse;
  dev.download(&out, &lse);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(is_poison_bf16(out[i])) << "out[" << i << "] written";
  for (size_t i = 0; i < lse.size(); ++i) ASSERT_TRUE(is_poison_f32(lse[i])) << "lse[" << i << "] written";
  zyfa_destroy(h);
}

// Host model of zyfa_fp8_quantize: descale 2^ceil(log2(amax/448)), codes RNE(x / descale).
float expected_descale(const std::vector<float>& x) {
  float amax = 0.0f;
  for (float v : x) {
    if (!std::isfinite(v)) return NAN;
    amax = std::max(amax, std::fabs(v));
  }
  if (amax == 0.0f) return 1.0f;
  int e = std::ilogb(amax) - 9;
  while (std::ldexp(448.0f, e) < amax) ++e;
  while (std::ldexp(448.0f, e - 1) >= amax) --e;
  return std::ldexp(1.0f, std::max(e, -126));
}

// e4m3 value of a code (finite codes only).
double e4m3_value(uint8_t c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -v : v;
}

struct QuantCase {
  const char* name;
  bool fp32;
  float scale;      // input magnitude
  int special;      // 0: none, 1: one Inf, 2: one NaN, 3: all zeros
};

void PrintTo(const QuantCase& c, std::ostream* os) { *os << c.name; }

class CudaQuantize : public ::testing::TestWithParam<QuantCase> {};

TEST_P(CudaQuantize, MatchesHostModel) {
  ZYFA_SKIP_WITHOUT_CUDA();
  const QuantCase qc = GetParam();
  const int64_t shape[4] = {2, 37, 3, 128};
  const int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
  const uint64_t seed = seed_for(std::string("Quantize") + qc.name);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, qc.scale);
  std::vector<float> x(n);
  for (auto& v : x) v = qc.special == 3 ? 0.0f : dist(rng);
  if (qc.special == 1) x[n / 3] = INFINITY;
  if (qc.special == 2) x[n / 2] = NAN;
  std::vector<uint16_t> xb(n);
  if (!qc.fp32) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &x[i], 4);
      const uint32_t rounded = bits + 0x7FFF + ((bits >> 16) & 1);  // RNE to bf16
      xb[i] = std::isnan(x[i]) ? 0x7FC0 : static_cast<uint16_t>(rounded >> 16);
      const uint32_t back = static_cast<uint32_t>(xb[i]) << 16;
      std::memcpy(&x[i], &back, 4);
    }
  }
  void *src = nullptr, *dst = nullptr, *ds = nullptr;
  const size_t src_bytes = qc.fp32 ? n * 4 : n * 2;
  ZYFA_CUDA_OK(cudaMalloc(&src, src_bytes));
  ZYFA_CUDA_OK(cudaMalloc(&dst, n));
  ZYFA_CUDA_OK(cudaMalloc(&ds, 4));
  ZYFA_CUDA_OK(cudaMemcpy(src, qc.fp32 ? static_cast<void*>(x.data()) : static_cast<void*>(xb.data()),
                          src_bytes, cudaMemcpyHostToDevice));
  ZYFA_CUDA_OK(cudaMemset(dst, 0x7F, n));
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
  d.src = zyfa_tensor_bshd(src, qc.fp32 ? ZYFA_DTYPE_FP32 : ZYFA_DTYPE_BF16, shape[0], shape[1], shape[2], shape[3]);
  d.dst = zyfa_tensor_bshd(dst, ZYFA_DTYPE_FP8_E4M3, shape[0], shape[1], shape[2], shape[3]);
  d.descale = static_cast<float*>(ds);
  d.backend = ZYFA_BACKEND_CUDA;
  ASSERT_EQ(zyfa_fp8_quantize(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_CUDA_OK(cudaDeviceSynchronize());
  float got_ds = 0.0f;
  std::vector<uint8_t> codes(n);
  ZYFA_CUDA_OK(cudaMemcpy(&got_ds, ds, 4, cudaMemcpyDeviceToHost));
  ZYFA_CUDA_OK(cudaMemcpy(codes.data(), dst, n, cudaMemcpyDeviceToHost));
  const float want_ds = expected_descale(x);
  if (std::isnan(want_ds)) {
    EXPECT_TRUE(std::isnan(got_ds)) << "descale " << got_ds << " for a non-finite input";
  } else {
    ASSERT_EQ(got_ds, want_ds);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      // RNE: the code is the nearest e4m3 value; on a tie the even code.
      const double t = static_cast<double>(x[i]) / want_ds;
      const double got = e4m3_value(codes[i]);
      const double err = std::fabs(got - t);
      bool ok = codes[i] != 0x7F && codes[i] != 0xFF;
      for (int dcode = -1; ok && dcode <= 1; dcode += 2) {
        const int other = static_cast<int>(codes[i]) + dcode;
        if ((other & 0x7F) == 0x7F || other < 0 || other > 255 || ((other ^ codes[i]) & 0x80)) continue;
        const double oerr = std::fabs(e4m3_value(static_cast<uint8_t>(other)) - t);
        if (oerr < err || (oerr == err && (other & 1) == 0)) ok = false;
      }
      if (!ok && ++bad <= 5) ADD_FAILURE() << "element " << i << ": x/descale " << t << " -> code " << int(codes[i]);
    }
    EXPECT_EQ(bad, 0);
  }
  cudaFree(src);
  cudaFree(dst);
  cudaFree(ds);
  zyfa_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(, CudaQuantize,
                         ::testing::Values(QuantCase{"Fp32", true, 1.0f, 0}, QuantCase{"Bf16", false, 3.0f, 0},
                                           QuantCase{"Fp32Tiny", true, 1e-6f, 0},
                                           QuantCase{"Fp32Huge", true, 1e6f, 0},
                                           QuantCase{"Fp32Inf", true, 1.0f, 1},
                                           QuantCase{"Bf16Nan", false, 1.0f, 2},
                                           QuantCase{"Fp32Zeros", true, 1.0f, 3}),
                         [](const ::testing::TestParamInfo<QuantCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace zyfa::test
