// The emu backend: an AmdDevice whose memory is host memory and whose launch runs the gfx950
// emulator, under the AMD host path shared with the hip backend.
//
// Interleaving seed: $ZYFA_EMU_SEED (decimal or 0x-hex), else a fixed default, so results
// through the public API are reproducible. Threads: $ZYFA_EMU_THREADS, else every core.
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"
#include "host/amd/amd_backend.h"
#include "host/amd/amd_device.h"
#include "host/backend.h"
#include "host/error.h"

namespace zyfa {
namespace {

constexpr uint64_t kDefaultSeed = 0x5EEDull;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 0);
  return (end && *end == 0) ? x : fallback;
}

class EmuDevice final : public amd::AmdDevice {
 public:
  ~EmuDevice() override {
    for (auto& kv : allocations_) ::operator delete(kv.first, std::align_val_t(256));
  }

  zyfa_status_t available() override { return ZYFA_STATUS_SUCCESS; }

  zyfa_status_t alloc(size_t bytes, void** ptr) override {
    void* p = ::operator new(bytes ? bytes : 1, std::align_val_t(256), std::nothrow);
    if (!p) return fail(ZYFA_STATUS_OUT_OF_MEMORY, "emu: host allocation of {} bytes failed", bytes);
    std::lock_guard<std::mutex> lock(mu_);
    allocations_[p] = bytes;
    *ptr = p;
    return ZYFA_STATUS_SUCCESS;
  }

  void free(void* ptr) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(ptr);
    if (it == allocations_.end()) return;
    allocations_.erase(it);
    ::operator delete(ptr, std::align_val_t(256));
  }

  // Host memory is device memory: the copy happens now, which is a valid stream order.
  zyfa_status_t copy_to_device(void* dst, const void* src, size_t bytes, void*) override {
    std::memcpy(dst, src, bytes);
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    std::shared_ptr<const emu::LoadedCodeObject> object;
    try {
      object = emu::load_code_object_cached(cfg.code_object->data, cfg.code_object->size);
    } catch (const std::exception& e) {
      return fail(ZYFA_STATUS_INTERNAL_ERROR, "emu: code object {} does not load: {}", cfg.code_object->name, e.what());
    }
    emu::Dispatch d;
    d.object = object.get();
    d.kernel = cfg.kernel;
    for (int i = 0; i < 3; ++i) { d.grid[i] = cfg.grid[i]; d.block[i] = cfg.block[i]; }
    d.dynamic_lds_bytes = cfg.dynamic_lds_bytes;
    d.kernarg = cfg.kernarg;
    d.kernarg_size = cfg.kernarg_size;
    int index = 0;
    for (const amd::MemRange& r : cfg.buffers)
      d.regions.push_back({reinterpret_cast<uint64_t>(r.base), r.bytes, r.writable, fmt::format("buffer #{}", index++)});
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& kv : allocations_)
        d.regions.push_back({reinterpret_cast<uint64_t>(kv.first), kv.second, false, "job table"});
    }
    emu::DispatchOptions opt;
    opt.seed = env_u64("ZYFA_EMU_SEED", kDefaultSeed);
    opt.threads = static_cast<unsigned>(env_u64("ZYFA_EMU_THREADS", 0));
    const emu::DispatchResult r = emu::run_dispatch(d, opt);
    if (!r.ok) return set_error(ZYFA_STATUS_KERNEL_FAULT, "emu: " + r.error);
    return ZYFA_STATUS_SUCCESS;
  }

 private:
  std::mutex mu_;
  std::map<void*, size_t> allocations_;
};

}  // namespace

std::unique_ptr<Backend> make_emu_backend() {
  return amd::make_amd_backend(std::make_unique<EmuDevice>(), ZYFA_BACKEND_EMU);
}

}  // namespace zyfa
