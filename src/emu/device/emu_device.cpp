// The emu backend: EmuDevice under the AMD host path shared with the hip backend.
// Threads: $ZYFA_EMU_THREADS, else every core.
#include "emu/device/emu_device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"
#include "host/amd/amd_backend.h"
#include "host/backend.h"
#include "host/error.h"

namespace zyfa {
namespace emu {
namespace {

constexpr uint64_t kDefaultSeed = 0x5EEDull;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 0);
  return (end && *end == 0) ? x : fallback;
}

}  // namespace

uint64_t emu_seed_from_env() { return env_u64("ZYFA_EMU_SEED", kDefaultSeed); }

EmuDevice::~EmuDevice() {
  for (auto& kv : allocations_) ::operator delete(kv.first, std::align_val_t(256));
}

zyfa_status_t EmuDevice::alloc(size_t bytes, void** ptr) {
  void* p = ::operator new(bytes ? bytes : 1, std::align_val_t(256), std::nothrow);
  if (!p) return fail(ZYFA_STATUS_OUT_OF_MEMORY, "emu: host allocation of {} bytes failed", bytes);
  std::lock_guard<std::mutex> lock(mu_);
  allocations_[p] = bytes;
  *ptr = p;
  return ZYFA_STATUS_SUCCESS;
}

void EmuDevice::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return;
  allocations_.erase(it);
  ::operator delete(ptr, std::align_val_t(256));
}

// Host memory is device memory: copying now is a valid stream order.
zyfa_status_t EmuDevice::upload(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t EmuDevice::launch(const amd::LaunchConfig& cfg) {
  std::shared_ptr<const LoadedCodeObject> object;
  try {
    object = load_code_object_cached(cfg.code_object->data, cfg.code_object->size);
  } catch (const std::exception& e) {
    return fail(ZYFA_STATUS_INTERNAL_ERROR, "emu: code object {} does not load: {}", cfg.code_object->name, e.what());
  }
  return run(cfg, *object);
}

zyfa_status_t EmuDevice::run(const amd::LaunchConfig& cfg, const LoadedCodeObject& object) {
  Dispatch d;
  d.object = &object;
  d.kernel = cfg.kernel;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = cfg.grid[i];
    d.block[i] = cfg.block[i];
  }
  d.dynamic_lds_bytes = cfg.dynamic_lds_bytes;
  d.kernarg = cfg.kernarg;
  d.kernarg_size = cfg.kernarg_size;
  int index = 0;
  for (const amd::MemRange& r : cfg.buffers)
    d.regions.push_back({reinterpret_cast<uint64_t>(r.base), r.bytes, r.writable, fmt::format("buffer #{}", index++)});
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& kv : allocations_) {
      // A buffer the launch lists keeps the access the launch gives it: zyfa_fp8_quantize's
      // partial-amax buffer is a device allocation that fp8_amax_* writes.
      bool listed = false;
      for (const amd::MemRange& r : cfg.buffers) listed = listed || r.base == kv.first;
      if (!listed) d.regions.push_back({reinterpret_cast<uint64_t>(kv.first), kv.second, false, "device allocation"});
    }
  }
  DispatchOptions opt;
  opt.seed = emu_seed_from_env();
  opt.threads = static_cast<unsigned>(env_u64("ZYFA_EMU_THREADS", 0));
  const DispatchResult r = run_dispatch(d, opt);
  // $ZYFA_EMU_STATS=1: one line per launch on stderr (kernel, size, time, throughput).
  if (env_u64("ZYFA_EMU_STATS", 0))
    std::fprintf(stderr, "zyfa emu: %s grid %u block %u: %llu waves, %llu instructions, %llu lane-instructions, %.3f s, %.1f M lane-instr/s\n",
                 cfg.kernel, cfg.grid[0] * cfg.grid[1] * cfg.grid[2], cfg.block[0] * cfg.block[1] * cfg.block[2],
                 (unsigned long long)r.stats.waves, (unsigned long long)r.stats.instructions,
                 (unsigned long long)r.stats.lane_instructions, r.stats.seconds,
                 r.stats.lane_instructions / 1e6 / (r.stats.seconds > 0 ? r.stats.seconds : 1e-9));
  if (!r.ok) return set_error(ZYFA_STATUS_KERNEL_FAULT, "emu: " + r.error);
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace emu

std::unique_ptr<Backend> make_emu_backend() {
  return amd::make_amd_backend(std::make_unique<emu::EmuDevice>(), ZYFA_BACKEND_EMU);
}

}  // namespace zyfa
