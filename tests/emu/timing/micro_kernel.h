// Running the timing model's hand-written micro-kernels (kernels/*.s, built into
// ZYFA_TIMING_TEST_KERNEL_DIR) through the emulator and the MI355X model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

  MicroLaunch(const char* code_object, const char* name, uint32_t work_items, uint32_t groups = 1)
      : file(code_object), kernel(name), threads(work_items), workgroups(groups) {}
  // The two buffers, as vectors of words.
  MicroLaunch& buffers(std::vector<uint32_t>& o, const std::vector<uint32_t>& i) {
    out = o.data();
    out_bytes = o.size() * 4;
    in = i.data();
    in_bytes = i.size() * 4;
    return *this;
  }
};

// The prediction (the test fails when the dispatch or the model does).
Prediction predict_micro(const MicroLaunch& l);

}  // namespace zyfa::emu::timing
