// The hip and emu backends: the plan layer's GPU backend (host/plan/gpu_backend.h) with the
// gfx950 policy (kernel choice, argument structs, launches) over an AmdDevice.
#pragma once

#include <memory>

#include "host/amd/amd_device.h"
#include "host/backend.h"

namespace zyfa::amd {

// `kind` is ZYFA_BACKEND_HIP or ZYFA_BACKEND_EMU; it only names the backend in messages.
// The backend owns the device and frees everything its plan cache allocated on it when
// destroyed.
std::unique_ptr<Backend> make_amd_backend(std::unique_ptr<AmdDevice> device, zyfa_backend_t kind);

}  // namespace zyfa::amd
