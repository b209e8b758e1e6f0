// The AMD host path shared by the hip and emu backends: job tables cached per shape,
// kernel-argument structs, kernel choice and launch, all on top of an AmdDevice.
#pragma once

#include <memory>

#include "host/amd/amd_device.h"
#include "host/backend.h"

namespace zyfa::amd {

// `kind` is ZYFA_BACKEND_HIP or ZYFA_BACKEND_EMU; it only names the backend in messages.
// The backend owns the device and frees everything it allocated on it when destroyed.
std::unique_ptr<Backend> make_amd_backend(std::unique_ptr<AmdDevice> device, zyfa_backend_t kind);

}  // namespace zyfa::amd
