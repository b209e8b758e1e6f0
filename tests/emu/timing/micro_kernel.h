// Running the timing model's hand-written micro-kernels (kernels/*.s, built into
// ZYFA_TIMING_TEST_KERNEL_DIR) through the emulator and the MI355X model.
#pragma once

#include <cstddef>
#include <cstdint>

#include "emu/timing/predict.h"

namespace zyfa::emu::timing {

struct MicroLaunch {
  const char* file = "timing.co";  // code object in ZYFA_TIMING_TEST_KERNEL_DIR
  const char* kernel = nullptr;
  uint32_t threads = 64;           // work-items per workgroup
  uint32_t workgroups = 1;
  // Kernel arguments +0 and +8 (common.inc): readable and writable buffers.
  void* out = nullptr;
  size_t out_bytes = 0;
  const void* in = nullptr;
  size_t in_bytes = 0;
  int cus = 0;                     // ModelOptions::cus
};

// The prediction (the test fails when the dispatch or the model does).
Prediction predict_micro(const MicroLaunch& l);

}  // namespace zyfa::emu::timing
