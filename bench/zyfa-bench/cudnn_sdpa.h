// cuDNN's SDPA forward (causal, BF16 or FP8 e4m3 inputs) through the cuDNN C++ frontend, as
// the comparison of zyfa-bench. libcudnn is loaded at run time; without it (or without the
// frontend headers at configure time) create() reports why and the bench runs ZYFA alone.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

namespace zyfa::bench {

struct SdpaShape {
  bool fp8 = false;
  int64_t batch = 1, seqlen = 0, heads = 0, heads_k = 0, d_qk = 128, d_v = 128;
  float softmax_scale = 0.0f;
  bool stats = false;  // also write the softmax stats (SdpaBuffers::stats)
  // Keys per sequence when above seqlen (chunked prefill: causal aligned bottom-right); 0: seqlen.
  int64_t seqlen_k = 0;
  // Ragged (THD) batch: per-sequence lengths of the rows packed in the buffers (batch is then
  // their count, seqlen / seqlen_k are ignored). cuDNN reads them through its padding mask
  // (per-sequence lengths) and ragged offsets (each sequence's first element), which the
  // object keeps in device memory of its own; stats are not offered for it.
  std::vector<int64_t> ragged_q, ragged_k;
};

// Inputs in the bench's bshd layout (the same buffers ZYFA reads). FP8: device float descales
// of q, k, v. out is BF16 (b, s, h, d_v) when the library offers BF16 output for FP8 inputs,
// else FP8 (reported by out_is_fp8()).
struct SdpaBuffers {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void* out = nullptr;
  const float *q_descale = nullptr, *k_descale = nullptr, *v_descale = nullptr;
  float* stats = nullptr;  // (b, h, s) float: max + ln(sum exp) of the scaled scores, as ZYFA's LSE
};

class CudnnSdpa {
 public:
  virtual ~CudnnSdpa() = default;
  virtual bool run(cudaStream_t stream) = 0;  // one forward call; false on error (see error())
  virtual bool out_is_fp8() const = 0;
  virtual std::string note() const = 0;  // output format, and the causal alignment used
  virtual std::string error() const = 0;
};

// Null and *why set when cuDNN is absent or the graph is not supported.
std::unique_ptr<CudnnSdpa> make_cudnn_sdpa(const SdpaShape& shape, const SdpaBuffers& buffers,
                                           std::string* why);
// "9.19.0" or "" when libcudnn cannot be loaded / was not configured.
std::string cudnn_version();

}  // namespace zyfa::bench
