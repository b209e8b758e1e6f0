// What the gfx950 policy (hip and emu backends) needs from a device: a GPU device of the plan
// layer that launches code objects. hip implements it with the HIP module API, emu with the
// gfx950 emulator. Everything else (job tables, kernel arguments, code objects) is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/plan/gpu_device.h"
#include "zyfa/zyfa.h"

namespace zyfa::amd {

// One code object embedded in libzyfa (generated sources in the build tree).
struct CodeObject {
  const char* name;         // e.g. "attn_fwd_bf16_gfx950"
  const unsigned char* data;
  size_t size;
};

// A buffer a kernel may touch. The emulator faults on any access outside these.
struct MemRange {
  const void* base;
  size_t bytes;
  bool writable;
};

struct LaunchConfig {
  const CodeObject* code_object;
  const char* kernel;            // symbol name in the code object
  uint32_t grid[3];              // workgroups
  uint32_t block[3];             // work-items per workgroup
  uint32_t dynamic_lds_bytes;
  const void* kernarg;
  size_t kernarg_size;
  void* stream;
  std::vector<MemRange> buffers;  // every buffer the kernel may read or write
};

// A GPU device (memory, uploads, capture state: host/plan/gpu_device.h) that launches gfx950
// code objects.
class AmdDevice : public plan::GpuDevice {
 public:
  // A launch lists every buffer it touches, the plan cache's job tables and scratch included,
  // with its access in LaunchConfig::buffers.
  virtual zyfa_status_t launch(const LaunchConfig& cfg) = 0;
};

}  // namespace zyfa::amd
