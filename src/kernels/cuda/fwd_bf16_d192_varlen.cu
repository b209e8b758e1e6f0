// Instantiation: bf16, d_qk = 192, varlen batches and seqlen_k > seqlen.
#include "kernels/cuda/fwd_launch.cuh"

namespace zyfa::cuda {
cudaError_t launch_fwd_bf16_d192_varlen(const FwdLaunch& l) {
  return launch_fwd_impl<false, 192, fwd_tuning(false, 192).stages, true>(l);
}
}  // namespace zyfa::cuda
