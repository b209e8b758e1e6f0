// zyfa_fp8_quantize with its options (rotation, smoothing mean, static descale, saturation
// counter), run on any backend and checked against an fp64 rotation written here from the
// definitions alone (docs/api.md, "Rotation"): Sylvester signs by popcount, the DCT by cos, the
// random signs by a splitmix64 of this file. Shared by the cpu, emu and cuda tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::test {

struct RotCase {
  zyfa_dtype_t dtype = ZYFA_DTYPE_BF16;
  int64_t batch = 1, seqlen = 16, heads = 2, head_dim = 128;
  zyfa_rotation_t rotation = ZYFA_ROTATION_HADAMARD;
  bool smooth = false;        // subtract a (heads, d) mean
  bool static_scale = false;  // a static descale chosen so that a few values saturate
  bool count = false;         // ask for the saturation counter
  bool peaked = true;         // std 1, rising maxima, outlier channels; else std 0.1 Gaussian
  bool bhsd = false;          // src and dst laid out (b, h, s, d): strided rows
  uint64_t seed = 1;
  std::string name() const;
  // A case of (batch, seqlen, heads) rows with the options given.
  static RotCase of(zyfa_dtype_t dtype, int64_t head_dim, zyfa_rotation_t rotation, bool smooth, bool static_scale,
                    bool count, bool peaked, int64_t batch, int64_t seqlen, int64_t heads) {
    return RotCase{dtype, batch, seqlen, heads, head_dim, rotation, smooth, static_scale, count, peaked};
  }
  RotCase as_bhsd() const {
    RotCase c = *this;
    c.bhsd = true;
    return c;
  }
};

// Host inputs of a case: src (bf16 bits or float), the mean, and the static descale.
struct RotInputs {
  std::vector<float> x;       // (b, s, h, d) values, exactly representable in the dtype
  std::vector<uint16_t> bf16;  // the same as bf16 bits (BF16 cases)
  std::vector<float> mean;    // (h, d), empty when !smooth
  float static_descale = 0.0f;
  uint64_t rotation_seed = 0;
};
RotInputs make_rot_inputs(const RotCase& c);

// Where buffers live: host memory (cpu, emu) or a device's (cuda).
struct RotMemory {
  std::function<void*(size_t)> alloc;
  std::function<void(void* dst, const void* src, size_t)> to_backend;
  std::function<void(void* dst, const void* src, size_t)> to_host;
  std::function<void(void*)> release;
};
RotMemory host_memory();

struct RotResult {
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;
  std::vector<uint8_t> codes;  // logical (b, s, h, d) order; poisoned with 0x7F (NaN) before the call
  float descale = 0.0f;        // poisoned with a signalling NaN
  uint32_t saturated = 0;      // poisoned with 0xFFFFFFFF
};
RotResult run_rot_quantize(zyfa_backend_t backend, const RotCase& c, const RotInputs& in, const RotMemory& mem);

// R[i][j] in fp64 from the definitions.
double reference_rotation(zyfa_rotation_t kind, int64_t d, uint64_t seed, int64_t i, int64_t j);

// Every code written and finite, each within half an e4m3 step (plus the float32 rounding of the
// transform) of the fp64 value; the descale the computed or static one; the counter within the
// values that the float32 rounding may push either side of 448. Returns "" or a description.
std::string check_rot_result(const RotCase& c, const RotInputs& in, const RotResult& r);

// BF16 d 128 Hadamard rows with non-finite sources: a NaN in one row (every output of the row
// is NaN: code 0x7F), +inf in another (outputs of both signs saturate, or make the computed
// descale NaN), +inf and -inf in a third (NaN where they cancel, infinities elsewhere). Runs
// `backend` and the cpu backend; "" when codes, descale bits and count agree bit for bit, else
// what differs.
std::string nonfinite_rows_vs_cpu(zyfa_backend_t backend, bool static_descale, const RotMemory& mem);

// The descale, the saturation count and every code of `got` equal to those of `want` (another
// backend's result for the same inputs). Returns "" or a description.
std::string compare_rot_results(const RotResult& got, const RotResult& want);

// End to end through zyfa_fwd: causal attention of q, k (outlier channels: 4 channels per head
// 10-30x the bulk, the same channels in q and k, k with a per-channel mean) and v, quantized to
// FP8 by zyfa_fp8_quantize on `quantize_backend` (no option; q and k rotated; q and k rotated
// and k smoothed by its calibrated channel means), attention on the cpu backend; each figure is
// the relative RMS error against fp64 attention of the unquantized BF16 inputs.
struct E2eCase {
  int64_t seqlen = 256, heads = 2, d_qk = 128;
  double bulk_std = 0.3;  // q and k bulk channels; the score std is then about 2-3
  uint64_t seed = 1;
};
struct E2eErrors {
  double plain = 0, rotated = 0, rotated_smoothed = 0;
  std::string error;  // a failed call, else ""
};
E2eErrors e2e_rotation_errors(zyfa_backend_t quantize_backend, const E2eCase& c);

}  // namespace zyfa::test
