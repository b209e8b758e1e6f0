// What the shared AMD host path (hip and emu backends) needs from a device: memory and a
// kernel launch. hip implements it with the HIP module API, emu with the gfx950 emulator.
// Everything else (validation, job tables, kernel arguments, code objects) is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

class AmdDevice {
 public:
  virtual ~AmdDevice() = default;
  virtual zyfa_status_t available() = 0;
  // Which device the next calls address (HIP: the current device). Device allocations such as
  // job tables are cached per device. A single-device implementation keeps the default.
  virtual int device_id() { return 0; }
  // Whether `stream` names a different device queue in each host thread (HIP: NULL and
  // hipStreamPerThread; emu: every stream, since a launch runs on the calling thread). Scratch
  // of such a queue is kept per thread (host/handle.h). The default, true, is always safe.
  virtual bool per_thread_queue(void* /*stream*/) { return true; }
  // Device memory owned by the backend: job tables (read by kernels) and the partial-amax
  // buffers of zyfa_fp8_quantize (written by fp8_amax_*, read by fp8_convert_*). Freed with
  // free(). A launch lists every buffer it touches, these included, with its access in
  // LaunchConfig::buffers.
  virtual zyfa_status_t alloc(size_t bytes, void** ptr) = 0;
  virtual void free(void* ptr) = 0;
  // Stream-ordered host-to-device copy; `src` must stay alive until the stream reaches it
  // (the caller keeps job tables alive in the handle's cache).
  virtual zyfa_status_t copy_to_device(void* dst, const void* src, size_t bytes, void* stream) = 0;
  virtual zyfa_status_t launch(const LaunchConfig& cfg) = 0;
};

}  // namespace zyfa::amd
