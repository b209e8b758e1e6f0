// Thread safety of one shared handle, for the concurrency tests of every backend: kThreads
// threads each make kCalls calls on one handle at the same time, and every result must be
// bitwise the one the same call gives alone on a fresh handle. A call quantizes fresh FP32
// q, k, v (each with its own descale) with zyfa_fp8_quantize and, in the forward test, runs
// zyfa_fwd on the codes with the three descales read from device memory. Two shapes alternate,
// so the first calls of each race to build and cache the job tables. The single-threaded
// results are checked too: the codes and descales against the host rule (power-of-two
// descale, RNE codes), the attention against the fp64 reference.
//
// Header-only: the memory and streams are the backend's (host memory for cpu and emu, device
// memory for cuda), given through CallMemory.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "host/numerics/e4m3.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

inline constexpr int kThreads = 8;
inline constexpr int kCalls = 20;

// The backend's memory and the stream each thread's calls use.
class CallMemory {
 public:
  virtual ~CallMemory() = default;
  virtual void* alloc(size_t bytes) = 0;  // freed with free()
  virtual void free(void* p) = 0;
  // Copies ordered on `stream` that return once done (download after the stream's work).
  virtual void upload(void* dst, const void* src, size_t bytes, void* stream) = 0;
  virtual void download(void* dst, const void* src, size_t bytes, void* stream) = 0;
  // The stream of the calls of thread `thread` (-1: the single-threaded runs).
  virtual void* stream(int thread) = 0;
};

// cpu and emu: host memory, no stream.
class HostCallMemory final : public CallMemory {
 public:
  void* alloc(size_t bytes) override { return ::operator new(bytes ? bytes : 1, std::align_val_t(256)); }
  void free(void* p) override { ::operator delete(p, std::align_val_t(256)); }
  void upload(void* dst, const void* src, size_t bytes, void*) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes, void*) override { std::memcpy(dst, src, bytes); }
  void* stream(int) override { return nullptr; }
};

struct CallSpec {
  int64_t seqlen, heads, heads_k;
  float std[3];  // of q, k, v: a power of two each, so every call has its own descales
  uint64_t seed;
};

// Call `call` of thread `thread`: shapes alternate between two sequence lengths (two job
// tables); the input scales are 2^-5..2^-2, each with its own descales, and within the
// Gaussian inputs' kernel tolerance (kScaleMax).
inline constexpr double kScaleMax = 0.25;
inline CallSpec call_spec(uint64_t seed, int thread, int call) {
  std::mt19937_64 rng(seed ^ (uint64_t(thread) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(call) << 32));
  CallSpec s{(thread + call) % 2 ? 130 : 48, 2, 1, {}, rng()};
  for (float& x : s.std) x = std::ldexp(1.0f, int(rng() % 4) - 5);
  return s;
}

struct CallResult {
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;
  std::vector<uint8_t> codes[3];  // q, k, v
  float descale[3] = {};
  std::vector<uint16_t> out;      // forward only
  std::vector<float> lse;
};

struct CallInputs {
  std::vector<float> src[3];
  int64_t heads[3];
};

inline CallInputs call_inputs(const CallSpec& s) {
  CallInputs in;
  std::mt19937_64 rng(s.seed);
  for (int t = 0; t < 3; ++t) {
    in.heads[t] = t == 0 ? s.heads : s.heads_k;
    std::normal_distribution<double> nd(0.0, s.std[t]);
    in.src[t].resize(size_t(s.seqlen * in.heads[t] * 128));
    for (float& x : in.src[t]) x = float(nd(rng));
  }
  return in;
}

// The buffers of one thread's calls, sized for the larger shape and reused by every call
// (so that no allocation or free synchronizes the device between the calls of two threads).
struct CallBuffers {
  static constexpr int64_t kMaxElems = 130 * 2 * 128;  // seqlen * heads * head_dim
  CallMemory& mem;
  float* descales;  // q, k, v
  void* src[3];
  void* codes[3];
  void* out;
  float* lse;

  explicit CallBuffers(CallMemory& m) : mem(m) {
    descales = static_cast<float*>(mem.alloc(3 * sizeof(float)));
    for (int t = 0; t < 3; ++t) {
      src[t] = mem.alloc(kMaxElems * sizeof(float));
      codes[t] = mem.alloc(kMaxElems);
    }
    out = mem.alloc(kMaxElems * 2);
    lse = static_cast<float*>(mem.alloc(kMaxElems / 128 * sizeof(float)));
  }
  ~CallBuffers() {
    mem.free(descales);
    for (int t = 0; t < 3; ++t) mem.free(src[t]), mem.free(codes[t]);
    mem.free(out);
    mem.free(lse);
  }
  CallBuffers(const CallBuffers&) = delete;
  CallBuffers& operator=(const CallBuffers&) = delete;
};

// One call on `h`: quantize q, k, v, then (with `fwd`) attention with device descales. Every
// output is poisoned first; the results are read back after the stream's work.
inline CallResult run_call(zyfa_handle_t h, zyfa_backend_t backend, CallBuffers& b, void* stream,
                           const CallSpec& s, bool fwd) {
  CallResult r;
  CallMemory& mem = b.mem;
  const CallInputs in = call_inputs(s);
  std::vector<float> poison_f(3);
  poison_f32(poison_f.data(), 3);
  mem.upload(b.descales, poison_f.data(), 3 * sizeof(float), stream);
  r.status = ZYFA_STATUS_SUCCESS;
  for (int t = 0; t < 3 && r.status == ZYFA_STATUS_SUCCESS; ++t) {
    const size_t n = in.src[t].size();
    mem.upload(b.src[t], in.src[t].data(), n * sizeof(float), stream);
    const std::vector<uint8_t> poison(n, numerics::kE4m3NaN);  // NaN: never the code of a finite input
    mem.upload(b.codes[t], poison.data(), n, stream);
    zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
    d.src = zyfa_tensor_bshd(b.src[t], ZYFA_DTYPE_FP32, 1, s.seqlen, in.heads[t], 128);
    d.dst = zyfa_tensor_bshd(b.codes[t], ZYFA_DTYPE_FP8_E4M3, 1, s.seqlen, in.heads[t], 128);
    d.descale = b.descales + t;
    d.stream = stream;
    d.backend = backend;
    r.status = zyfa_fp8_quantize(h, &d);
  }
  const size_t out_n = size_t(s.seqlen * s.heads * 128), lse_n = size_t(s.heads * s.seqlen);
  if (fwd && r.status == ZYFA_STATUS_SUCCESS) {
    std::vector<uint16_t> po(out_n);
    poison_bf16(po.data(), out_n);
    std::vector<float> pl(lse_n);
    poison_f32(pl.data(), lse_n);
    mem.upload(b.out, po.data(), out_n * 2, stream);
    mem.upload(b.lse, pl.data(), lse_n * sizeof(float), stream);
    zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
    d.q = zyfa_tensor_bshd(b.codes[0], ZYFA_DTYPE_FP8_E4M3, 1, s.seqlen, s.heads, 128);
    d.k = zyfa_tensor_bshd(b.codes[1], ZYFA_DTYPE_FP8_E4M3, 1, s.seqlen, s.heads_k, 128);
    d.v = zyfa_tensor_bshd(b.codes[2], ZYFA_DTYPE_FP8_E4M3, 1, s.seqlen, s.heads_k, 128);
    d.out = zyfa_tensor_bshd(b.out, ZYFA_DTYPE_BF16, 1, s.seqlen, s.heads, 128);
    d.lse = b.lse;
    d.q_descale = zyfa_descale_device(b.descales);
    d.k_descale = zyfa_descale_device(b.descales + 1);
    d.v_descale = zyfa_descale_device(b.descales + 2);
    d.stream = stream;
    d.backend = backend;
    r.status = zyfa_fwd(h, &d);
  }
  if (r.status != ZYFA_STATUS_SUCCESS) {
    r.error = zyfa_last_error();
    return r;
  }
  mem.download(r.descale, b.descales, 3 * sizeof(float), stream);
  for (int t = 0; t < 3; ++t) {
    r.codes[t].resize(in.src[t].size());
    mem.download(r.codes[t].data(), b.codes[t], r.codes[t].size(), stream);
  }
  if (fwd) {
    r.out.resize(out_n);
    r.lse.resize(lse_n);
    mem.download(r.out.data(), b.out, out_n * 2, stream);
    mem.download(r.lse.data(), b.lse, lse_n * sizeof(float), stream);
  }
  return r;
}

// The single-threaded result of a call held to the rules: descale = 2^ceil(log2(amax / 448)),
// codes = RNE(src / descale) (exact division), every output and LSE value written and finite,
// and (with `fwd`) the attention within `tol` of fp64.
inline void check_alone(const CallSpec& s, const CallResult& r, bool fwd, const Tolerance& tol,
                        const std::string& what) {
  for (size_t i = 0; i < r.out.size(); ++i)
    ASSERT_NE(r.out[i] & 0x7F80, 0x7F80) << what << ": output " << i << " is NaN, Inf or unwritten";
  for (size_t i = 0; i < r.lse.size(); ++i)
    ASSERT_TRUE(std::isfinite(r.lse[i])) << what << ": LSE " << i << " is not finite or unwritten";
  const CallInputs in = call_inputs(s);
  for (int t = 0; t < 3; ++t) {
    double amax = 0;
    for (float x : in.src[t]) amax = std::fmax(amax, std::fabs(double(x)));
    const float want = std::ldexp(1.0f, int(std::ceil(std::log2(amax / numerics::kE4m3Max))));
    ASSERT_EQ(r.descale[t], want) << what << ": descale of tensor " << t;
    for (size_t i = 0; i < in.src[t].size(); ++i) {
      const uint8_t code = numerics::double_to_e4m3(double(in.src[t][i]) / want, true).code;
      ASSERT_EQ(r.codes[t][i], code) << what << ": code " << i << " of tensor " << t;
    }
  }
  if (!fwd) return;
  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, s.heads, s.heads_k, s.seqlen).with(DescaleMode::DEVICE_SCALAR);
  AttnData data = make_attn_data(cfg);  // the shape's strides; the inputs are replaced below
  data.q = r.codes[0], data.k = r.codes[1], data.v = r.codes[2];
  data.q_descale.assign(size_t(s.heads_k), r.descale[0]);
  data.k_descale.assign(size_t(s.heads_k), r.descale[1]);
  data.v_descale.assign(size_t(s.heads_k), r.descale[2]);
  data.dev_descales = {r.descale[0], r.descale[1], r.descale[2]};
  const CheckResult c = check_output(data, reference_fp64(data), r.out.data(), r.lse.data(), tol);
  ASSERT_TRUE(c.ok()) << what << ": " << c.summary();
}

// The test: all calls alone (one thread, fresh handle, checked), then all of them from
// kThreads threads at once on another fresh handle, bitwise equal to the former.
inline void expect_thread_safe(zyfa_backend_t backend, CallMemory& mem, bool fwd, const Tolerance& tol,
                               const std::string& name) {
  const uint64_t seed = seed_for(name);
  std::printf("%s: %d threads x %d calls, seed %llu\n", name.c_str(), kThreads, kCalls, (unsigned long long)seed);
  std::vector<std::vector<CallResult>> alone(kThreads), shared(kThreads, std::vector<CallResult>(kCalls));
  {
    zyfa_handle_t h = nullptr;
    ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
    CallBuffers buffers(mem);
    for (int t = 0; t < kThreads; ++t)
      for (int c = 0; c < kCalls; ++c)
        alone[t].push_back(run_call(h, backend, buffers, mem.stream(-1), call_spec(seed, t, c), fwd));
    zyfa_destroy(h);
  }
  for (int t = 0; t < kThreads; ++t)
    for (int c = 0; c < kCalls; ++c) {
      const std::string what = "thread " + std::to_string(t) + " call " + std::to_string(c) + " alone";
      ASSERT_EQ(alone[t][c].status, ZYFA_STATUS_SUCCESS) << what << ": " << alone[t][c].error;
      // The fp64 attention reference for the first call of each shape of each thread; every
      // call's codes, descales and written, finite outputs.
      check_alone(call_spec(seed, t, c), alone[t][c], fwd && c < 2, tol, what);
    }

  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      void* stream = mem.stream(t);
      CallBuffers buffers(mem);
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (int c = 0; c < kCalls; ++c) shared[t][c] = run_call(h, backend, buffers, stream, call_spec(seed, t, c), fwd);
    });
  for (std::thread& th : threads) th.join();
  zyfa_destroy(h);

  int wrong = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int c = 0; c < kCalls; ++c) {
      const CallResult& a = alone[t][c];
      const CallResult& b = shared[t][c];
      bool same = b.status == ZYFA_STATUS_SUCCESS && std::memcmp(a.descale, b.descale, sizeof a.descale) == 0 &&
                  a.out == b.out && std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
      for (int x = 0; x < 3; ++x) same = same && a.codes[x] == b.codes[x];
      if (!same && wrong++ < 5)
        ADD_FAILURE() << name << ": thread " << t << " call " << c << " differs from the call alone (status "
                      << b.status << " " << b.error << ", q descale " << b.descale[0] << " vs " << a.descale[0] << ")";
    }
  EXPECT_EQ(wrong, 0) << wrong << " of " << kThreads * kCalls << " calls on the shared handle differ";
}

// The same on a backend whose memory is host memory (cpu, emu).
inline void expect_thread_safe_on_host(zyfa_backend_t backend, bool fwd, const Tolerance& tol, const std::string& name) {
  HostCallMemory mem;
  expect_thread_safe(backend, mem, fwd, tol, name);
}

// The two thread-safety tests of a host-memory backend: quantize alone, and quantize then
// attention, seeded by "<suite>.Quantize" and "<suite>.QuantizeThenFwd".
#define ZYFA_HOST_THREAD_SAFETY_TESTS(suite, backend, tolerance)                                \
  TEST(suite, QuantizeOnOneHandleFromEightThreads) {                                           \
    expect_thread_safe_on_host(backend, /*fwd=*/false, tolerance, #suite ".Quantize");         \
  }                                                                                            \
  TEST(suite, QuantizeThenFwdOnOneHandleFromEightThreads) {                                    \
    expect_thread_safe_on_host(backend, /*fwd=*/true, tolerance, #suite ".QuantizeThenFwd");   \
  }

}  // namespace zyfa::test
