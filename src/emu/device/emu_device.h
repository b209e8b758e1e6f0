// The emu backend's device: host memory is device memory, a launch runs the gfx950 emulator
// over the call's buffers plus every allocation of the device (job tables).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "host/amd/amd_device.h"

namespace zyfa::emu {

class LoadedCodeObject;

class EmuDevice : public amd::AmdDevice {
 public:
  ~EmuDevice() override;
  zyfa_status_t available() override { return ZYFA_STATUS_SUCCESS; }
  // A launch runs to completion on the calling thread, whatever stream it names: threads
  // sharing a stream value still run at the same time, so each keeps its own scratch.
  bool per_thread_queue(void*) override { return true; }
  zyfa_status_t alloc(size_t bytes, void** ptr) override;
  void free(void* ptr) override;
  zyfa_status_t upload(void* dst, const void* src, size_t bytes) override;
  // Loads (once, cached) the embedded code object and runs the dispatch.
  zyfa_status_t launch(const amd::LaunchConfig& cfg) override;

 protected:
  // Runs cfg's kernel from `object` (tests substitute patched copies of code objects).
  zyfa_status_t run(const amd::LaunchConfig& cfg, const LoadedCodeObject& object);

 private:
  std::mutex mu_;
  std::map<void*, size_t> allocations_;
};

// Interleaving seed of the emu backend: $ZYFA_EMU_SEED (decimal or 0x-hex), else a fixed
// default so that results through the public API are reproducible.
uint64_t emu_seed_from_env();

}  // namespace zyfa::emu
