// Device-side input generation for zyfa-bench: BF16 values from a counter-based hash, so a
// 32K-token input is filled in milliseconds instead of seconds of host RNG and copies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "bench_inputs.h"

namespace zyfa::bench {

// n BF16 values, mean 0, standard deviation stddev, reproducible from seed.
cudaError_t fill_gaussian_bf16(uint16_t* dst, int64_t n, uint64_t seed, float stddev, cudaStream_t stream);

// n BF16 values of the realistic recipe (bench_inputs.h); t's scale, mean and sink point to
// device memory.
cudaError_t fill_realistic_bf16(uint16_t* dst, int64_t n, const RealisticTensor& t, cudaStream_t stream);

}  // namespace zyfa::bench
