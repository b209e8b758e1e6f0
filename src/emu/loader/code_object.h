// A gfx950 code object (AMDGPU ELF64) loaded for emulation: its loaded image, kernel
// descriptors, argument metadata, and the text section decoded once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emu/core/instruction.h"

namespace zyfa::emu {

// The 64-byte kernel descriptor (LLVM AMDGPUUsage, "Kernel Descriptor", code object V3+).
struct KernelDescriptor {
  uint32_t group_segment_fixed_size = 0;
  uint32_t private_segment_fixed_size = 0;
  uint32_t kernarg_size = 0;
  int64_t kernel_code_entry_byte_offset = 0;
  uint32_t compute_pgm_rsrc3 = 0;
  uint32_t compute_pgm_rsrc1 = 0;
  uint32_t compute_pgm_rsrc2 = 0;
  uint16_t kernel_code_properties = 0;
  uint16_t kernarg_preload = 0;

  // Decoded fields.
  uint32_t vgpr_count() const;        // architected + accumulation registers (granule 8)
  uint32_t accum_offset() const;      // first AGPR in the unified file (multiple of 4)
  uint32_t sgpr_count() const;
  uint32_t user_sgpr_count() const { return (compute_pgm_rsrc2 >> 1) & 0x1F; }
  bool enable_private_segment() const { return compute_pgm_rsrc2 & 1; }
  bool enable_workgroup_id(int dim) const { return (compute_pgm_rsrc2 >> (7 + dim)) & 1; }
  bool enable_workgroup_info() const { return (compute_pgm_rsrc2 >> 10) & 1; }
  uint32_t enable_vgpr_workitem_id() const { return (compute_pgm_rsrc2 >> 11) & 3; }
  bool user_private_segment_buffer() const { return kernel_code_properties & (1u << 0); }
  bool user_dispatch_ptr() const { return kernel_code_properties & (1u << 1); }
  bool user_queue_ptr() const { return kernel_code_properties & (1u << 2); }
  bool user_kernarg_segment_ptr() const { return kernel_code_properties & (1u << 3); }
  bool user_dispatch_id() const { return kernel_code_properties & (1u << 4); }
  bool user_flat_scratch_init() const { return kernel_code_properties & (1u << 5); }
  bool user_private_segment_size() const { return kernel_code_properties & (1u << 6); }
  bool wave32() const { return kernel_code_properties & (1u << 10); }
  uint32_t kernarg_preload_dwords() const { return kernarg_preload & 0x7F; }
  uint32_t kernarg_preload_offset() const { return kernarg_preload >> 7; }
  uint32_t float_mode() const { return (compute_pgm_rsrc1 >> 12) & 0xFF; }  // round + denorm
  bool dx10_clamp() const { return (compute_pgm_rsrc1 >> 21) & 1; }
  bool ieee_mode() const { return (compute_pgm_rsrc1 >> 23) & 1; }
  bool fp16_overflow() const { return (compute_pgm_rsrc1 >> 26) & 1; }  // GFX9+: FP16_OVFL
};

struct KernelArg {
  std::string value_kind;  // "by_value", "global_buffer", "hidden_block_count_x", ...
  uint32_t offset = 0;
  uint32_t size = 0;
  std::string name;
};

struct KernelInfo {
  std::string name;
  KernelDescriptor kd;
  uint64_t entry = 0;   // byte offset of the first instruction in the image
  std::vector<KernelArg> args;  // from the metadata note; empty if absent
  uint32_t kernarg_segment_size = 0;
  uint32_t wavefront_size = 64;
};

class LoadedCodeObject {
 public:
  // Parses and decodes; throws std::runtime_error with a message on malformed input.
  LoadedCodeObject(const uint8_t* data, size_t size);

  const KernelInfo* find_kernel(const std::string& name) const;
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  const std::string& target() const { return target_; }

  // Instruction starting at image offset pc, or nullptr if pc is not an instruction boundary
  // of the text section.
  const Instruction* at(uint64_t pc) const {
    if (pc < text_begin_ || pc >= text_end_ || (pc & 3)) return nullptr;
    const int32_t i = index_[(pc - text_begin_) >> 2];
    return i < 0 ? nullptr : &insts_[i];
  }
  const std::vector<Instruction>& instructions() const { return insts_; }
  const std::vector<uint8_t>& image() const { return image_; }
  uint64_t text_begin() const { return text_begin_; }
  // File offset of .text: image offset pc lives at file offset pc - text_begin() + this.
  uint64_t text_file_offset() const { return text_file_offset_; }
  uint64_t text_end() const { return text_end_; }

 private:
  std::vector<uint8_t> image_;
  std::vector<KernelInfo> kernels_;
  std::vector<Instruction> insts_;
  std::vector<int32_t> index_;
  uint64_t text_begin_ = 0, text_end_ = 0, text_file_offset_ = 0;
  std::string target_;
};

// Decoded code objects are cached by content address and size (embedded code objects live as
// long as the process; the cache keeps decoding to once per object).
std::shared_ptr<const LoadedCodeObject> load_code_object_cached(const uint8_t* data, size_t size);

}  // namespace zyfa::emu
