// One GPU architecture's part of a call, in the steps CUTLASS's kernel adapters use for every
// kernel: can it run the problem, which job table, how much workspace, and the launch (kernel,
// arguments, geometry, buffers; tensor maps on CUDA). GpuBackend (gpu_backend.h) runs the
// steps in that order for every GPU backend; the policies only answer them.
#pragma once

#include <cstddef>

#include "host/job_table.h"
#include "host/plan/plan_cache.h"
#include "host/problem.h"

namespace zyfa::plan {

// What the plan cache provides a fwd launch.
struct FwdResources {
  DeviceTable table;
  void* workspace = nullptr;  // workspace_bytes(p) bytes, or null when that is 0
};

class ArchPolicy {
 public:
  virtual ~ArchPolicy() = default;
  // NOT_SUPPORTED with a message for what the kernels cannot take; nothing is allocated yet.
  virtual zyfa_status_t can_run(const FwdProblem& p) = 0;
  virtual JobTableParams job_table_params(const FwdProblem& p) = 0;
  // Per-queue device scratch of one call (0: none).
  virtual size_t workspace_bytes(const FwdProblem& p) = 0;
  // Issues the call's launches on p.stream; allocates and copies nothing.
  virtual zyfa_status_t launch_fwd(const FwdProblem& p, const FwdResources& r) = 0;
  // zyfa_fp8_quantize, with the cache for its scratch.
  virtual zyfa_status_t fp8_quantize(const QuantizeProblem& p, PlanCache& cache) = 0;
};

}  // namespace zyfa::plan
