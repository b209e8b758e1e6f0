// The cuda backend under 8 threads sharing one handle, for each way threads name streams:
// NULL and cudaStreamLegacy (one stream for every thread), cudaStreamPerThread (one handle
// value, a different stream in each thread), one created stream shared by every thread, and
// one created stream per thread. Quantize, and quantize then attention with device descales
// and cached job tables, bitwise equal to the same calls made alone
// (support/concurrent_calls.h). Skips without a Hopper GPU.
#include <atomic>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "support/concurrent_calls.h"

namespace zyfa::test {
namespace {

enum class Streams { NULL_STREAM, LEGACY, PER_THREAD, ONE_SHARED, ONE_PER_THREAD };

const char* to_string(Streams s) {
  switch (s) {
    case Streams::NULL_STREAM: return "Null";
    case Streams::LEGACY: return "Legacy";
    case Streams::PER_THREAD: return "PerThread";
    case Streams::ONE_SHARED: return "OneShared";
    case Streams::ONE_PER_THREAD: return "OnePerThread";
  }
  return "?";
}

// Device memory; copies ordered on the calling thread's stream so that no copy synchronizes
// with the other threads' work (as a blocking cudaMemcpy on the legacy stream would).
class CudaCallMemory final : public CallMemory {
 public:
  explicit CudaCallMemory(Streams mode) : mode_(mode) {
    const int n = mode == Streams::ONE_SHARED ? 1 : mode == Streams::ONE_PER_THREAD ? kThreads + 1 : 0;
    created_.resize(size_t(n));
    for (cudaStream_t& s : created_) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaCallMemory() override {
    for (cudaStream_t s : created_) cudaStreamDestroy(s);
  }
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    return p;
  }
  void free(void* p) override { check(cudaFree(p), "cudaFree"); }
  void upload(void* dst, const void* src, size_t bytes, void* stream) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)), "upload");
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "upload sync");
  }
  void download(void* dst, const void* src, size_t bytes, void* stream) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)), "download");
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "download sync");
  }
  void* stream(int thread) override {
    switch (mode_) {
      case Streams::NULL_STREAM: return nullptr;
      case Streams::LEGACY: return cudaStreamLegacy;
      case Streams::PER_THREAD: return cudaStreamPerThread;
      case Streams::ONE_SHARED: return created_[0];
      case Streams::ONE_PER_THREAD: return created_[size_t(thread + 1)];  // -1: the calls alone
    }
    return nullptr;
  }

 private:
  void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) ADD_FAILURE() << what << ": " << cudaGetErrorString(e);
  }
  Streams mode_;
  std::vector<cudaStream_t> created_;
};

class CudaConcurrency : public ::testing::TestWithParam<std::tuple<Streams, bool>> {};

TEST_P(CudaConcurrency, OneHandleFromEightThreads) {
  ZYFA_SKIP_WITHOUT_CUDA();
  const auto [mode, fwd] = GetParam();
  CudaCallMemory mem(mode);
  const Tolerance tol =
      kernel_tolerance(AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 2, 1, 130).with(Inputs::GAUSSIAN, kScaleMax));
  expect_thread_safe(ZYFA_BACKEND_CUDA, mem, fwd, tol,
                     std::string("CudaConcurrency.") + to_string(mode) + (fwd ? ".QuantizeThenFwd" : ".Quantize"));
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaConcurrency,
                         ::testing::Combine(::testing::Values(Streams::NULL_STREAM, Streams::LEGACY,
                                                              Streams::PER_THREAD, Streams::ONE_SHARED,
                                                              Streams::ONE_PER_THREAD),
                                            ::testing::Bool()),
                         [](const auto& i) {
                           return std::string(to_string(std::get<0>(i.param))) +
                                  (std::get<1>(i.param) ? "_QuantizeThenFwd" : "_Quantize");
                         });

}  // namespace
}  // namespace zyfa::test
