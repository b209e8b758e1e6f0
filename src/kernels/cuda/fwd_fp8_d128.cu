// Instantiation: fp8, d_qk = 128.
#include "kernels/cuda/fwd_launch.cuh"

namespace zyfa::cuda {
cudaError_t launch_fwd_fp8_d128(const FwdLaunch& l) { return launch_fwd_impl<true, 128, fwd_tuning(true, 128).stages, false>(l); }
}  // namespace zyfa::cuda
