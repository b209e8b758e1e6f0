// Instantiation: bf16, d_qk = 192.
#include "kernels/cuda/fwd_launch.cuh"

namespace zyfa::cuda {
cudaError_t launch_fwd_bf16_d192(const FwdLaunch& l) { return launch_fwd_impl<false, 192, fwd_tuning(false, 192).stages, false>(l); }
}  // namespace zyfa::cuda
