// Whole-dispatch prediction on the modelled MI355X: workgroups go round robin over the 8 XCDs
// and, within an XCD, round robin over its 32 CUs; the CUs chosen are emulated with issue
// traces and replayed by the CU model; the kernel ends with the slowest CU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emu/emulator.h"
#include "emu/timing/cu_model.h"

namespace zyfa::emu::timing {

struct Geometry {
  const LoadedCodeObject* object = nullptr;
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {64, 1, 1};
  uint32_t dynamic_lds_bytes = 0;
};

struct ModelOptions {
  // CUs simulated in full: 0 = every CU that gets a workgroup; N > 0 = N CUs spread evenly
  // over the dispatch order, CU 0 (the first and fullest) always among them; 32 = every CU
  // of XCD 0, each position of an XCD's round robin once.
  int cus = 0;
  double flops = 0;  // if > 0, "tflops" is added to the JSON
  // Workgroups emulated per simulated CU to estimate which of its lines others read too
  // (memory_system.h, HbmShare): the first of every other CU of its XCD, and of this many
  // CUs at its place in other XCDs; 0: no samples, every missing line from HBM.
  int sharing_samples = 3;
};

struct Prediction {
  bool ok = false;
  std::string error;
  std::string kernel;
  uint64_t cycles = 0;
  double kernel_us = 0;          // at the fitted sustained clock (mi355x.h)
  double kernel_us_peak = 0;     // at the 2.4 GHz peak clock
  uint64_t workgroups = 0;
  int cus_simulated = 0, cus_busy = 0, resident_per_cu = 0;
  double emulated_seconds = 0;
  double flops = 0;
  CuStats stats;  // summed over the CUs simulated (cycles: the slowest)
  int slowest_cu = -1;             // the CU whose cycles are the kernel's
  uint64_t fastest_cu_cycles = 0;  // the fastest CU simulated: with `cycles`, the spread
  std::string json() const;
};

// `run` executes the dispatch with the options it is given (the caller's arguments and
// buffers; options.only_workgroups and options.timing are set here).
using Runner = std::function<DispatchResult(const DispatchOptions&)>;
Prediction predict(const Geometry& g, const Runner& run, const DispatchOptions& base, const ModelOptions& m);

// The CU of the modelled dispatcher that runs workgroup `linear_id`.
int cu_of_workgroup(uint64_t linear_id);

}  // namespace zyfa::emu::timing
