// Running configurations through the public API on the cuda backend: device buffers, poisoned
// outputs with a guard region, and the skip when no Hopper GPU is present.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

// Returns an empty string when the cuda backend is usable, else the reason (for GTEST_SKIP).
inline std::string cuda_unavailable_reason() {
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return std::string("zyfa_create: ") + zyfa_last_error();
  const zyfa_status_t s = zyfa_backend_query(h, ZYFA_BACKEND_CUDA, nullptr);
  std::string why = s == ZYFA_STATUS_SUCCESS ? "" : zyfa_last_error();
  zyfa_destroy(h);
  return why;
}

#define ZYFA_SKIP_WITHOUT_CUDA()                                               \
  do {                                                                         \
    const std::string why_ = ::zyfa::test::cuda_unavailable_reason();          \
    if (!why_.empty()) GTEST_SKIP() << "cuda backend not usable here: " << why_; \
  } while (0)

#define ZYFA_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr << ": " << cudaGetErrorString(cudaGetLastError())

// A copy from pageable host memory may return before its DMA has landed (CUDA runtime,
// "API synchronization behavior"), and calls on a non-blocking stream are not ordered after
// it: every host-to-device copy of the tests is followed by this before a launch may read it.
inline bool copies_landed() { return cudaDeviceSynchronize() == cudaSuccess; }

// Poisons a device output of `out_elems` BF16 values and an LSE of `lse_elems` floats (guards
// included), and copies them back; false when a copy fails.
inline bool poison_device_outputs(void* out, size_t out_elems, float* lse, size_t lse_elems) {
  std::vector<uint16_t> o(out_elems);
  poison_bf16(o.data(), o.size());
  std::vector<float> l(lse_elems);
  poison_f32(l.data(), l.size());
  return cudaMemcpy(out, o.data(), o.size() * 2, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(lse, l.data(), l.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
         copies_landed();
}
inline bool download_outputs(const void* out, size_t out_elems, const float* lse, size_t lse_elems,
                             std::vector<uint16_t>* out_host, std::vector<float>* lse_host) {
  out_host->resize(out_elems);
  lse_host->resize(lse_elems);
  return cudaMemcpy(out_host->data(), out, out_elems * 2, cudaMemcpyDeviceToHost) == cudaSuccess &&
         cudaMemcpy(lse_host->data(), lse, lse_elems * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
}

// Device copies of one configuration's inputs, plus poisoned output / LSE buffers.
class DeviceCase {
 public:
  static constexpr size_t kGuard = 256;  // poisoned BF16 elements after the output

  explicit DeviceCase(const AttnData& a) : a_(a) {
    q_ = alloc(a.q_bytes());
    k_ = alloc(a.k_bytes());
    v_ = alloc(a.v_bytes());
    out_ = alloc((a.out_count() + kGuard) * 2);
    lse_ = static_cast<float*>(alloc((a.lse_count() + 1) * sizeof(float)));
    if (a.descale_count() > 0) descales_ = static_cast<float*>(alloc(a.descale_count() * sizeof(float)));
    upload_inputs(a);
    poison();
  }
  ~DeviceCase() {
    for (void* p : allocations_) cudaFree(p);
  }
  DeviceCase(const DeviceCase&) = delete;
  DeviceCase& operator=(const DeviceCase&) = delete;

  // Copies (new) inputs of the same shape into the same device buffers.
  void upload_inputs(const AttnData& a) {
    ok_ &= cudaMemcpy(q_, a.q.data(), a.q_bytes(), cudaMemcpyHostToDevice) == cudaSuccess;
    ok_ &= cudaMemcpy(k_, a.k.data(), a.k_bytes(), cudaMemcpyHostToDevice) == cudaSuccess;
    ok_ &= cudaMemcpy(v_, a.v.data(), a.v_bytes(), cudaMemcpyHostToDevice) == cudaSuccess;
    if (descales_) {
      ok_ &= cudaMemcpy(descales_, a.dev_descales.data(), a.descale_count() * sizeof(float),
                        cudaMemcpyHostToDevice) == cudaSuccess;
    }
    ok_ &= copies_landed();
  }
  void poison() { ok_ &= poison_device_outputs(out_, a_.out_count() + kGuard, lse_, a_.lse_count() + 1); }
  zyfa_fwd_desc_t desc(cudaStream_t stream = nullptr) const {
    zyfa_fwd_desc_t d = a_.desc(q_, k_, v_, out_, a_.cfg.lse ? lse_ : nullptr, descales_);
    d.backend = ZYFA_BACKEND_CUDA;
    d.stream = stream;
    return d;
  }
  // Output (with guard) and LSE (with one guard float) back on the host.
  void download(std::vector<uint16_t>* out, std::vector<float>* lse) {
    ok_ &= download_outputs(out_, a_.out_count() + kGuard, lse_, a_.lse_count() + 1, out, lse);
  }
  bool ok() const { return ok_; }
  void* q() const { return q_; }

 private:
  void* alloc(size_t bytes) {
    void* p = nullptr;
    ok_ &= cudaMalloc(&p, bytes == 0 ? 1 : bytes) == cudaSuccess;
    allocations_.push_back(p);
    return p;
  }

  const AttnData& a_;
  bool ok_ = true;
  std::vector<void*> allocations_;
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *out_ = nullptr;
  float* lse_ = nullptr;
  float* descales_ = nullptr;
};

inline bool guard_intact(const std::vector<uint16_t>& out, size_t out_count) {
  for (size_t i = out_count; i < out.size(); ++i)
    if (!is_poison_bf16(out[i])) return false;
  return true;
}

// One zyfa_fwd on the device with a fresh handle; out (with its guard) and LSE back on the host.
inline void run_on_device(const AttnData& a, std::vector<uint16_t>* out, std::vector<float>* lse) {
  DeviceCase dev(a);
  ASSERT_TRUE(dev.ok());
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  const zyfa_fwd_desc_t d = dev.desc();
  ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_CUDA_OK(cudaDeviceSynchronize());
  zyfa_destroy(h);
  dev.download(out, lse);
  ASSERT_TRUE(dev.ok());
  EXPECT_TRUE(guard_intact(*out, a.out_count())) << "write past the output";
}

}  // namespace zyfa::test
