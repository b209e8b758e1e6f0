// The one Backend of every GPU (hip, emu, cuda): a device, an architecture policy and the plan
// cache between them. The path of a call is in docs/design.md ("From zyfa_fwd to a launch").
#pragma once

#include <memory>

#include "host/backend.h"
#include "host/plan/arch_policy.h"
#include "host/plan/gpu_device.h"

namespace zyfa::plan {

// `name` ("hip", "emu", "cuda") names the backend in messages. The policy may keep a pointer
// to the device: the backend destroys the cache first, then the policy, then the device.
std::unique_ptr<Backend> make_gpu_backend(std::unique_ptr<GpuDevice> device, std::unique_ptr<ArchPolicy> policy,
                                          const char* name);

}  // namespace zyfa::plan
