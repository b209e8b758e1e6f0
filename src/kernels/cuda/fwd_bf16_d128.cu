// Instantiation: bf16, d_qk = 128.
#include "kernels/cuda/fwd_launch.cuh"

// Three k/v stages fit next to q at d = 128 (224 KB of shared memory).
namespace zyfa::cuda {
cudaError_t launch_fwd_bf16_d128(const FwdLaunch& l) { return launch_fwd_impl<false, 128, fwd_tuning(false, 128).stages, false>(l); }
}  // namespace zyfa::cuda
