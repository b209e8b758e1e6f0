// zyfa-bench --model mi355x: predicted MI355X times from the timing model (src/emu/timing,
// docs/timing-model.md) over the emulator, for ZYFA's own launches (ModelRecorder) and for AMD
// AITER's shipped gfx950 forward kernels (fwd_hd128_bf16_causal, fwd_hd192_hd128_bf16_causal
// from .cache/aiter), launched as AITER's own dispatcher launches them.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "emu/timing/predict.h"

namespace zyfa::bench {

struct ModelProblem {
  int64_t batch = 1, heads = 32, heads_k = 32, seqlen = 2048, d_qk = 128;
  float input_std = 0.1f;  // Gaussian q, k, v
  uint64_t seed = 1;
  int cus = 1;             // CUs simulated (0: every busy CU)
};

// The prediction of one emulator dispatch, `cus` CUs simulated (0: every busy CU).
emu::timing::Prediction predict_dispatch(const emu::Dispatch& d, const emu::DispatchOptions& opt, int cus);

// While one is alive, every emulator dispatch of the process is predicted (only the CUs
// simulated run, so outputs are not complete) and its prediction recorded.
class ModelRecorder {
 public:
  explicit ModelRecorder(int cus);
  ~ModelRecorder();
  std::vector<emu::timing::Prediction> take();

 private:
  int cus_;
  std::mutex mu_;
  std::vector<emu::timing::Prediction> launches_;
};

// True when the kernel's code object is in `dir` (the fetch script's layout).
bool have_aiter_kernel(const std::string& dir, int64_t d_qk);
emu::timing::Prediction predict_aiter(const std::string& dir, const ModelProblem& p);

}  // namespace zyfa::bench
