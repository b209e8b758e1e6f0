#include "host/handle.h"

#include <atomic>

#include "host/error.h"

zyfa::Backend& zyfa_handle::backend(zyfa_backend_t kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = backends_[static_cast<size_t>(kind)];
  if (!slot) {
    switch (kind) {
      case ZYFA_BACKEND_HIP: slot = zyfa::make_hip_backend(); break;
      case ZYFA_BACKEND_EMU: slot = zyfa::make_emu_backend(); break;
      case ZYFA_BACKEND_CUDA: slot = zyfa::make_cuda_backend(); break;
      case ZYFA_BACKEND_CPU:
      default: slot = zyfa::make_cpu_backend(); break;
    }
  }
  return *slot;
}

zyfa_backend_t zyfa_handle::resolve(zyfa_backend_t requested) {
  if (requested != ZYFA_BACKEND_AUTO) return requested;
  // available() records its reason in the thread's error message; AUTO must not leave
  // a probe's message behind, so the caller clears it after resolution.
  for (zyfa_backend_t kind : {ZYFA_BACKEND_CUDA, ZYFA_BACKEND_HIP}) {
    if (backend(kind).available() == ZYFA_STATUS_SUCCESS) return kind;
  }
  return ZYFA_BACKEND_CPU;
}

namespace zyfa {

uint64_t scratch_thread() {
  static std::atomic<uint64_t> next{1};  // 0 is the key of scratch shared by every thread
  thread_local const uint64_t self = next.fetch_add(1, std::memory_order_relaxed);
  return self;
}

}  // namespace zyfa
