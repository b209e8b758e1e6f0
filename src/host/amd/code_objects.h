// The gfx950 code objects embedded in libzyfa and the resources of each kernel, both
// generated at build time (src/kernels/hip/CMakeLists.txt) into the build tree.
// Empty when the library was built without a gfx950 toolchain.
#pragma once

#include <cstdint>
#include <vector>

#include "host/amd/amd_device.h"

namespace zyfa::amd {

// One kernel as the code object's metadata (NT_AMDGPU_METADATA note) describes it.
struct KernelInfo {
  const char* kernel;       // symbol name, e.g. "attn_fwd_bf16_d128"
  const char* code_object;  // CodeObject::name of the object that holds it
  uint32_t kernarg_size;    // bytes; equals sizeof of the kernel's argument struct
  uint32_t lds_bytes;       // group segment (static LDS)
  uint32_t vgprs;
  uint32_t agprs;
  uint32_t sgprs;
  uint32_t scratch_bytes;   // private segment; the build refuses anything but 0
  uint32_t max_workgroup_size;
};

const std::vector<CodeObject>& embedded_code_objects();
const std::vector<KernelInfo>& embedded_kernels();

// nullptr when absent.
const CodeObject* find_code_object(const char* name);
const KernelInfo* find_kernel(const char* kernel);

}  // namespace zyfa::amd
