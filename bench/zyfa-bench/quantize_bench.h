// zyfa-bench --op quantize: throughput of zyfa_fp8_quantize (BF16 -> FP8) with and without its
// options, next to a device-to-device copy of the same source measured in the same run; on the
// emu backend, predicted MI355X times instead (--model mi355x).
#pragma once

#include <cstdint>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::bench {

struct QuantizeBenchOptions {
  std::vector<int64_t> seqlens;
  std::vector<int64_t> dims;
  int64_t batch = 1, heads = 32;
  int warmup = 50, iters = 100;
  void* stream = nullptr;  // cudaStream_t on cuda
  // With the emu backend: one call per variant, its launches' MI355X times predicted by the
  // timing model (docs/timing-model.md) with `model_cus` CUs simulated, instead of timed.
  bool model = false;
  int model_cus = 1;
};

// Prints one line per (S, d, variant). Returns false when a call fails.
bool bench_quantize(zyfa_handle_t h, zyfa_backend_t backend, const QuantizeBenchOptions& o);

}  // namespace zyfa::bench
