// Instantiation: bf16, d_qk = 128, varlen batches and seqlen_k > seqlen.
#include "kernels/cuda/fwd_launch.cuh"

namespace zyfa::cuda {
cudaError_t launch_fwd_bf16_d128_varlen(const FwdLaunch& l) {
  return launch_fwd_impl<false, 128, fwd_tuning(false, 128).stages, true>(l);
}
}  // namespace zyfa::cuda
