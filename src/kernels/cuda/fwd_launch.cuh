// Launch of one fwd_kernel instantiation; included by the per-variant translation units.
#pragma once

#include "kernels/cuda/fwd_kernel.cuh"
#include "kernels/cuda/fwd_launch.h"

namespace zyfa::cuda {

template <bool kFp8, int kDqk, int kStages, bool kLengths>
cudaError_t launch_fwd_impl(const FwdLaunch& l) {
  using Cfg = FwdConfig<kFp8, kDqk, kStages, kLengths>;
  static_assert(Cfg::kBlockM == kFwdBlockM && Cfg::kBlockN == kFwdBlockN);
  auto kernel = fwd_kernel<Cfg, kStages>;
  cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (err != cudaSuccess) return err;
  kernel<<<l.grid, Cfg::kThreads, Cfg::kSmemBytes, l.stream>>>(l.args, l.tma_q, l.tma_k, l.tma_v);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
