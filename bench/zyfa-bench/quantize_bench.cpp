#include "quantize_bench.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "zyfa_build_config.h"

#if ZYFA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device_fill.h"
#endif
#if ZYFA_BENCH_MODEL
#include "model.h"  // predicted MI355X times (--model mi355x)
#endif

namespace zyfa::bench {
namespace {

struct Variant {
  const char* name;
  bool rotate, smooth, static_scale;
};
// Plain (amax + convert), rotated with a computed descale (two passes over the source), rotated
// with a static descale (one pass: what an engine with calibrated scales runs), the same with
// K smoothing.
constexpr Variant kVariants[] = {{"plain", false, false, false},
                                 {"rotate", true, false, false},
                                 {"rotate+static", true, false, true},
                                 {"rotate+smooth+static", true, true, true}};

// Buffers in the backend's memory and a clock that waits for the backend.
struct Memory {
  bool device = false;
  void* alloc(size_t n) {
#if ZYFA_HAVE_CUDA
    if (device) {
      void* p = nullptr;
      return cudaMalloc(&p, n) == cudaSuccess ? p : nullptr;
    }
#endif
    return new uint8_t[n]();
  }
  void release(void* p) {
#if ZYFA_HAVE_CUDA
    if (device) {
      cudaFree(p);
      return;
    }
#endif
    delete[] static_cast<uint8_t*>(p);
  }
};

// MI355X HBM3E peak bandwidth (AMD's specification; docs/timing-model.md): the predicted
// throughput's reference while no copy is predicted.
constexpr double kMi355xHbmTbs = 8.0;

// Microseconds of one call: measured, or the sum of its launches' predicted kernel times.
template <typename Call, typename Time>
double call_us(const QuantizeBenchOptions& o, Call&& call, Time&& time, bool* ok) {
#if ZYFA_BENCH_MODEL
  if (o.model) {
    ModelRecorder rec(o.model_cus);
    *ok = call();
    double us = 0;
    for (const auto& p : rec.take()) {
      if (!p.ok) {
        std::fprintf(stderr, "prediction of %s failed: %s\n", p.kernel.c_str(), p.error.c_str());
        *ok = false;
      }
      us += p.kernel_us;
      std::printf("  %s\n", p.json().c_str());  // where the cycles go
    }
    return us;
  }
#endif
  return time([&] { *ok = *ok && call(); });
}

}  // namespace

bool bench_quantize(zyfa_handle_t h, zyfa_backend_t backend, const QuantizeBenchOptions& o) {
  Memory mem;
  mem.device = backend == ZYFA_BACKEND_CUDA;
  auto sync = [&] {
#if ZYFA_HAVE_CUDA
    if (mem.device) cudaStreamSynchronize(static_cast<cudaStream_t>(o.stream));
#endif
  };
  if (o.model)
    std::printf("predicted MI355X kernel times (timing model, %d CU(s) simulated); last column: share of the HBM peak\n",
                o.model_cus);
  std::printf("%-8s %-5s %-22s %10s %10s %12s\n", "S", "d", "variant", "us", "TB/s", o.model ? "vs HBM peak" : "vs copy");
  for (int64_t S : o.seqlens)
    for (int64_t d : o.dims) {
      const int64_t n = o.batch * S * o.heads * d;
      auto* src = static_cast<uint16_t*>(mem.alloc(size_t(n) * 2));
      auto* dst = static_cast<uint8_t*>(mem.alloc(size_t(n)));
      auto* copy = static_cast<uint8_t*>(mem.alloc(size_t(n) * 2));
      auto* scal = static_cast<float*>(mem.alloc(16));
      auto* mean = static_cast<float*>(mem.alloc(size_t(o.heads * d) * 4));
      if (!src || !dst || !copy || !scal || !mean) {
        std::fprintf(stderr, "allocation of %lld elements failed\n", (long long)n);
        return false;
      }
#if ZYFA_HAVE_CUDA
      if (mem.device) {
        fill_gaussian_bf16(src, n, 1234, 1.0f, static_cast<cudaStream_t>(o.stream));
        cudaMemsetAsync(mean, 0, size_t(o.heads * d) * 4, static_cast<cudaStream_t>(o.stream));
      }
#endif
      if (!mem.device) {
        std::mt19937_64 rng(1234);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (int64_t i = 0; i < n; ++i) {
          const float f = nd(rng);
          uint32_t u;
          std::memcpy(&u, &f, 4);
          src[i] = uint16_t(u >> 16);
        }
      }
      // Time `iters` calls of f after `warmup`, in microseconds per call.
      auto time = [&](auto&& f) -> double {
        for (int i = 0; i < o.warmup; ++i) f();
        sync();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < o.iters; ++i) f();
        sync();
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / o.iters;
      };
      double copy_us = 0;
#if ZYFA_HAVE_CUDA
      if (mem.device) {
        copy_us = time([&] { cudaMemcpyAsync(copy, src, size_t(n) * 2, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(o.stream)); });
        std::printf("%-8lld %-5lld %-22s %10.1f %10.3f %12s\n", (long long)S, (long long)d, "copy (bf16 -> bf16)", copy_us,
                    4.0 * double(n) / copy_us * 1e-6, "1.00");
      }
#endif
      const double copy_tbs = o.model ? kMi355xHbmTbs : copy_us > 0 ? 4.0 * double(n) / copy_us * 1e-6 : 0.0;
      if (o.model)
        std::printf("%-8lld %-5lld %-22s %10s %10.3f %12s\n", (long long)S, (long long)d, "HBM peak (MI355X)", "-",
                    kMi355xHbmTbs, "1.00");
      for (const Variant& v : kVariants) {
        zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
        qd.src = zyfa_tensor_bshd(src, ZYFA_DTYPE_BF16, o.batch, S, o.heads, d);
        qd.dst = zyfa_tensor_bshd(dst, ZYFA_DTYPE_FP8_E4M3, o.batch, S, o.heads, d);
        qd.descale = scal;
        qd.stream = o.stream;
        qd.backend = backend;
        if (v.rotate) qd.rotation = d == 192 ? ZYFA_ROTATION_DCT3_HADAMARD64 : ZYFA_ROTATION_HADAMARD;
        qd.rotation_seed = 42;
        qd.smooth_mean = v.smooth ? mean : nullptr;
        qd.static_descale = v.static_scale ? 0.0625f : 0.0f;
        bool ok = true;
        const double us = call_us(o, [&] { return zyfa_fp8_quantize(h, &qd) == ZYFA_STATUS_SUCCESS; }, time, &ok);
        if (!ok) {
          std::fprintf(stderr, "S=%lld d=%lld %s: %s\n", (long long)S, (long long)d, v.name, zyfa_last_error());
          return false;
        }
        // Bytes of the tensors (2 read + 1 written per element), whatever passes the kernels make.
        const double tbs = 3.0 * double(n) / us * 1e-6;
        std::printf("%-8lld %-5lld %-22s %10.1f %10.3f %12s\n", (long long)S, (long long)d, v.name, us, tbs,
                    copy_tbs > 0 ? std::to_string(tbs / copy_tbs).substr(0, 4).c_str() : "-");
      }
      for (void* p : {static_cast<void*>(src), static_cast<void*>(dst), static_cast<void*>(copy), static_cast<void*>(scal),
                      static_cast<void*>(mean)})
        mem.release(p);
    }
  return true;
}

}  // namespace zyfa::bench
