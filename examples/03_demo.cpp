// The main job: causal attention on the best backend present, checked against fp64.
//   zyfa-demo [--backend auto|cpu|emu|cuda] [--dtype bf16|fp8] [--seqlen N] [--heads H] [--heads-k HK]
// With no GPU, AUTO resolves to the cpu backend, and the demo also runs the gfx950 kernels
// through the emulator (emu) on a smaller shape, since that is what an MI355X would run.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/example_util.hpp"
#include "zyfa/zyfa.hpp"

#if ZYFA_DEMO_CUDA
#include <cuda_runtime.h>
#endif

namespace {

struct Options {
  zyfa_backend_t backend = ZYFA_BACKEND_AUTO;
  bool fp8 = false;
  int seqlen = 1024, heads = 8, heads_k = 2;
};

// Buffers on the host or the device, depending on the backend.
struct Memory {
  zyfa_backend_t backend;
  void* alloc(size_t bytes, const void* init) {
    if (backend == ZYFA_BACKEND_CUDA) {
#if ZYFA_DEMO_CUDA
      void* p = nullptr;
      if (cudaMalloc(&p, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
      if (init) cudaMemcpy(p, init, bytes, cudaMemcpyHostToDevice);
      return p;
#else
      throw std::runtime_error("this demo was built without the CUDA runtime");
#endif
    }
    if (backend == ZYFA_BACKEND_HIP) throw std::runtime_error("this demo allocates no HIP memory; use zyfa-bench");
    void* p = std::malloc(bytes);
    if (init) std::memcpy(p, init, bytes);
    return p;
  }
  void download(void* host, const void* p, size_t bytes) {
#if ZYFA_DEMO_CUDA
    if (backend == ZYFA_BACKEND_CUDA) {
      cudaMemcpy(host, p, bytes, cudaMemcpyDeviceToHost);
      return;
    }
#endif
    std::memcpy(host, p, bytes);
  }
  void release(void* p) {
#if ZYFA_DEMO_CUDA
    if (backend == ZYFA_BACKEND_CUDA) {
      cudaFree(p);
      return;
    }
#endif
    std::free(p);
  }
  void sync() {
#if ZYFA_DEMO_CUDA
    if (backend == ZYFA_BACKEND_CUDA) cudaDeviceSynchronize();
#endif
  }
};

int run(const zyfa::Handle& handle, zyfa_backend_t backend, const Options& o) {
  const int B = 1, S = o.seqlen, H = o.heads, HK = o.heads_k, D = 128;
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  rng.seed(seed);
  auto qf = example::gaussian(size_t(B) * S * H * D, 1.0f, rng);
  auto kf = example::gaussian(size_t(B) * S * HK * D, 1.0f, rng);
  auto vf = example::gaussian(size_t(B) * S * HK * D, 1.0f, rng);
  Memory mem{backend};
  std::vector<void*> owned;
  auto upload = [&](const void* p, size_t n) { owned.push_back(mem.alloc(n, p)); return owned.back(); };

  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  const zyfa_dtype_t dt = o.fp8 ? ZYFA_DTYPE_FP8_E4M3 : ZYFA_DTYPE_BF16;
  std::vector<float>* inputs[3] = {&qf, &kf, &vf};
  zyfa_tensor_t* tensors[3] = {&desc.q, &desc.k, &desc.v};
  zyfa_descale_t* descales[3] = {&desc.q_descale, &desc.k_descale, &desc.v_descale};
  const int heads[3] = {H, HK, HK};
  for (int i = 0; i < 3; ++i) {
    std::vector<float>& x = *inputs[i];
    if (o.fp8) {
      // Quantize on the backend itself: the descale stays in its memory and the kernel reads it.
      void* src = upload(x.data(), x.size() * 4);
      void* dst = mem.alloc(x.size(), nullptr);
      owned.push_back(dst);
      auto* ds = static_cast<float*>(mem.alloc(4, nullptr));
      owned.push_back(ds);
      zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
      qd.src = zyfa_tensor_bshd(src, ZYFA_DTYPE_FP32, B, S, heads[i], D);
      qd.dst = zyfa_tensor_bshd(dst, dt, B, S, heads[i], D);
      qd.descale = ds;
      qd.backend = backend;
      handle.fp8_quantize(qd);
      *tensors[i] = zyfa_tensor_bshd(dst, dt, B, S, heads[i], D);
      *descales[i] = zyfa_descale_device(ds);
    } else {
      std::vector<uint16_t> h(x.size());
      for (size_t j = 0; j < x.size(); ++j) {
        h[j] = example::float_to_bf16(x[j]);
        x[j] = example::bf16_to_float(h[j]);  // the reference sees the rounded inputs
      }
      *tensors[i] = zyfa_tensor_bshd(upload(h.data(), h.size() * 2), dt, B, S, heads[i], D);
    }
  }
  std::vector<uint16_t> out(size_t(B) * S * H * D, 0xFFFF);
  void* dout = upload(out.data(), out.size() * 2);
  desc.out = zyfa_tensor_bshd(dout, ZYFA_DTYPE_BF16, B, S, H, D);
  desc.backend = backend;

  const auto t0 = std::chrono::steady_clock::now();
  handle.fwd(desc);
  mem.sync();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  mem.download(out.data(), dout, out.size() * 2);
  for (void* p : owned) mem.release(p);

  const double err = example::relative_rms(out, example::attention_fp64(qf, kf, vf, B, S, H, HK, D));
  std::printf("%-4s %s B=%d S=%d H=%d H_k=%d d=%d (seed %llu): %.1f ms, relative RMS error vs fp64 %.3e%s\n",
              zyfa_backend_name(backend), o.fp8 ? "FP8 " : "BF16", B, S, H, HK, D,
              static_cast<unsigned long long>(seed), ms, err, o.fp8 ? " (includes input quantization)" : "");
  return err < (o.fp8 ? 0.1 : 0.01) ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--backend") {
      const std::string b = next();
      o.backend = b == "cpu" ? ZYFA_BACKEND_CPU : b == "emu" ? ZYFA_BACKEND_EMU
                : b == "cuda" ? ZYFA_BACKEND_CUDA : b == "hip" ? ZYFA_BACKEND_HIP : ZYFA_BACKEND_AUTO;
    } else if (a == "--dtype") {
      o.fp8 = next() == "fp8";
    } else if (a == "--seqlen") {
      o.seqlen = std::atoi(next().c_str());
    } else if (a == "--heads") {
      o.heads = std::atoi(next().c_str());
    } else if (a == "--heads-k") {
      o.heads_k = std::atoi(next().c_str());
    } else {
      std::fprintf(stderr, "usage: %s [--backend auto|cpu|emu|cuda] [--dtype bf16|fp8] [--seqlen N] "
                   "[--heads H] [--heads-k HK]\n", argv[0]);
      return 1;
    }
  }
  try {
    zyfa::Handle handle;
    const zyfa_backend_t best = handle.resolve(o.backend);
    std::printf("zyfa %s: backend %s\n", zyfa_version_string(), zyfa_backend_name(best));
    int rc = run(handle, best, o);
    if (o.backend == ZYFA_BACKEND_AUTO && best == ZYFA_BACKEND_CPU) {
      // No GPU here: also run the gfx950 kernels, on the emulator, on a shape it runs in seconds.
      if (zyfa_backend_query(handle.get(), ZYFA_BACKEND_EMU, nullptr) == ZYFA_STATUS_SUCCESS) {
        Options small = o;
        small.seqlen = std::min(o.seqlen, 300);
        small.heads = 2;
        small.heads_k = 1;
        for (bool fp8 : {false, true}) {
          small.fp8 = fp8;
          rc |= run(handle, ZYFA_BACKEND_EMU, small);
        }
      } else {
        std::printf("emu: %s\n", zyfa_last_error());
      }
    }
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
