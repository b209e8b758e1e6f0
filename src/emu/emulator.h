// The gfx950 functional emulator's C++ API: run one kernel dispatch of a code object on the
// host, with memory limited to the regions of the call. Used by the emu backend and by the
// zyfa-emu-run tool.
//
// What "strict" means here: memory results land late (randomly, but never later than the
// s_waitcnt that waits for them), reading a register whose load has not been waited for
// stops the kernel, MFMA results read before the documented wait states stop the kernel,
// waves of a workgroup interleave at random instruction boundaries and workgroups run in a
// random order, all driven by `seed`. A correct kernel gives bitwise identical results for
// every seed. See docs/emulator.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace zyfa::emu {

class LoadedCodeObject;

struct MemoryRegion {
  uint64_t base = 0;
  uint64_t bytes = 0;
  bool writable = false;
  std::string name;  // for diagnostics ("buffer q", "kernarg")
};

struct TraceOptions {
  bool enabled = false;
  uint64_t workgroup = 0;   // linear workgroup id
  uint32_t wave = 0;        // wave within the workgroup
  bool registers = false;   // dump the registers an instruction writes after it executes
  std::ostream* out = nullptr;
};

struct DispatchOptions {
  uint64_t seed = 1;
  unsigned threads = 0;                            // 0: hardware concurrency
  uint64_t max_instructions_per_wave = 1ull << 30;  // a hang becomes a fault
  TraceOptions trace;
};

struct Dispatch {
  const LoadedCodeObject* object = nullptr;
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};   // workgroups per dimension
  uint32_t block[3] = {64, 1, 1}; // work-items per workgroup
  uint32_t dynamic_lds_bytes = 0;
  const void* kernarg = nullptr;  // explicit arguments; hidden ones are appended per metadata
  size_t kernarg_size = 0;
  std::vector<MemoryRegion> regions;
};

struct DispatchStats {
  uint64_t workgroups = 0, waves = 0, instructions = 0, lane_instructions = 0;
  double seconds = 0;
};

struct DispatchResult {
  bool ok = false;
  std::string error;  // the first fault (lowest workgroup id), with kernel, PC, wave, lane
  DispatchStats stats;
};

DispatchResult run_dispatch(const Dispatch& dispatch, const DispatchOptions& options);

}  // namespace zyfa::emu
