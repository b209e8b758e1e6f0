// The object behind zyfa_handle_t: one lazily created instance of each backend.
//
// Thread safety: any number of threads may call into one handle at once. Every piece of
// mutable state a backend keeps (job-table caches, device scratch) is either guarded by a
// mutex or keyed so that two calls whose device work can interleave never share it; see
// scratch_thread() for the keying rule.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include "host/backend.h"

struct zyfa_handle {
  // Returns the backend instance for a concrete kind (never AUTO); created on first use.
  zyfa::Backend& backend(zyfa_backend_t kind);
  // Resolves AUTO: cuda, then hip, when their device is usable; cpu otherwise.
  zyfa_backend_t resolve(zyfa_backend_t requested);

 private:
  std::mutex mutex_;
  std::array<std::unique_ptr<zyfa::Backend>, 5> backends_;
};

namespace zyfa {

// Device scratch (quantize partials, the FP8 vᵀ buffer) is keyed by (device, stream, thread).
// Calls on one real stream are ordered on the device, so they may share a buffer as long as
// the launches of one call are issued together (the backends hold the buffer's mutex while
// launching). A stream handle that names a different queue in each host thread, such as
// cudaStreamPerThread / hipStreamPerThread, or NULL (the per-thread default stream in a build
// that selects it), and every call of a backend that executes on the calling thread (emu),
// must not share: their key's thread is scratch_thread(), else 0.
//
// A number for the calling thread, unique for the life of the process. Unlike
// std::thread::id it is never reused, since a finished thread's per-thread stream may still
// be draining work that uses its scratch.
uint64_t scratch_thread();

}  // namespace zyfa
