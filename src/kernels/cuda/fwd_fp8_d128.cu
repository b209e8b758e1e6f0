// Instantiation: fp8, d_qk = 128.
#include "kernels/cuda/fwd_launch.cuh"

#ifndef ZYFA_CUDA_FP8_D128_STAGES
#define ZYFA_CUDA_FP8_D128_STAGES 3
#endif

namespace zyfa::cuda {
cudaError_t launch_fwd_fp8_d128(const FwdLaunch& l) { return launch_fwd_impl<true, 128, ZYFA_CUDA_FP8_D128_STAGES>(l); }
}  // namespace zyfa::cuda
