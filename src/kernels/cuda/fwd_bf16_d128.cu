// Instantiation: bf16, d_qk = 128.
#include "kernels/cuda/fwd_launch.cuh"

namespace zyfa::cuda {
cudaError_t launch_fwd_bf16_d128(const FwdLaunch& l) { return launch_fwd_impl<false, 128, 2>(l); }
}  // namespace zyfa::cuda
