// Buffer resource (V#) decoding and the per-element address of a MUBUF access, linear or
// swizzled, with its range check; also the per-lane layout of the private (scratch) segment.
//
// Sources: AMD CDNA4 ISA, "Vector Memory Buffer Instructions": buffer resource fields, the
// swizzled address (index and offset split by const_index_stride and const_element_size:
// buffer_offset = (index_msb * stride + offset_msb * element_size) * index_stride +
// index_lsb * element_size + offset_lsb; soffset is added outside it) and its rules (accesses
// dword aligned, none wider than the element, stride a multiple of the element); LLVM
// AMDGPUUsage "Relaxed Buffer OOB Mode" (per-dword range check). The gfx9 V# has no
// ELEMENT_SIZE field (LLVM writes one only up to GFX8, SIInstrInfo::getScratchRsrcWords23), so
// the element is a dword; INDEX_STRIDE [22:21] of word 3 selects 8, 16, 32 or 64; with
// ADD_TID_ENABLE the DATA_FORMAT field holds stride bits [17:14] (the same LLVM function).
// Bit 62 (cache swizzle, MI300 and later) only changes how L1 sets are picked, not addresses.
#pragma once

#include <cstdint>
#include <string>

namespace zyfa::emu {

struct BufferResource {
  uint64_t base = 0;          // [47:0]
  uint32_t stride = 0;        // [61:48], plus DATA_FORMAT << 14 with ADD_TID_ENABLE
  bool cache_swizzle = false; // [62]
  bool swizzle = false;       // [63]
  uint32_t num_records = 0;   // word 2
  uint32_t data_format = 0;   // word 3 [18:15]
  uint32_t index_stride = 8;  // word 3 [22:21]: 8 << field
  bool add_tid = false;       // word 3 [23]
};

// The gfx9 swizzle element: one dword.
constexpr uint32_t kSwizzleElementBytes = 4;

BufferResource decode_buffer_resource(const uint32_t words[4]);

// Byte offset from base + soffset of the element at (index, offset), swizzled or linear:
// linear = offset + stride * index.
uint64_t buffer_element_offset(const BufferResource& r, uint32_t index, uint64_t offset);

// Range check of one element of `bytes` bytes (LLVM "Relaxed Buffer OOB Mode": each dword, or
// each sub-dword element, on its own). `structured`: the access has an index (idxen or
// ADD_TID) and the resource a non-zero stride; the index is then checked against num_records
// (records), otherwise offset + bytes against num_records (bytes).
bool buffer_element_in_range(const BufferResource& r, bool structured, uint32_t index, uint64_t offset,
                             uint32_t bytes);

// Empty when a swizzled access of `dwords` elements of `elem_bytes` bytes at `offset` is
// defined; otherwise what the ISA leaves undefined about it, for the fault message.
std::string swizzled_access_undefined(const BufferResource& r, bool structured, uint64_t offset,
                                      uint32_t elem_bytes, uint32_t dwords);

// Private segment: a wave's scratch holds each lane's bytes interleaved one dword at a time
// (index = lane, index stride 64, element 4 bytes, no record stride), so the same private
// address of every lane lands in adjacent dwords (LLVM AMDGPUUsage, "Memory Spaces":
// private memory is accessed interleaved; the scratch resource LLVM builds for wave64 has
// ADD_TID and index stride 64).
constexpr uint64_t scratch_lane_offset(uint32_t lane, uint32_t offset) {
  return (uint64_t(offset / 4) * 64 + lane) * 4 + offset % 4;
}

// Flat apertures (src_shared_base / src_private_base, the high 32 bits of a flat address):
// the emulator's own values, above every user-space host address, so that no buffer of a call
// can lie in them. A flat address in the private aperture is a lane's private offset.
constexpr uint32_t kSharedApertureHi = 0x00010000u;
constexpr uint32_t kPrivateApertureHi = 0x00020000u;

}  // namespace zyfa::emu
