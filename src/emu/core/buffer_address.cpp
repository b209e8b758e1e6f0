// Buffer addressing: see buffer_address.h for the rules and where they come from.
#include "emu/core/buffer_address.h"

#include <fmt/format.h>

namespace zyfa::emu {

BufferResource decode_buffer_resource(const uint32_t w[4]) {
  BufferResource r;
  r.base = uint64_t(w[0]) | (uint64_t(w[1] & 0xFFFF) << 32);
  r.stride = (w[1] >> 16) & 0x3FFF;
  r.cache_swizzle = (w[1] >> 30) & 1;
  r.swizzle = w[1] >> 31;
  r.num_records = w[2];
  r.data_format = (w[3] >> 15) & 0xF;
  r.index_stride = 8u << ((w[3] >> 21) & 3);
  r.add_tid = (w[3] >> 23) & 1;
  if (r.add_tid) r.stride |= r.data_format << 14;
  return r;
}

uint64_t buffer_element_offset(const BufferResource& r, uint32_t index, uint64_t offset) {
  if (!r.swizzle) return offset + uint64_t(r.stride) * index;
  const uint64_t e = kSwizzleElementBytes;
  const uint64_t index_msb = index / r.index_stride, index_lsb = index % r.index_stride;
  const uint64_t offset_msb = offset / e, offset_lsb = offset % e;
  return (index_msb * r.stride + offset_msb * e) * r.index_stride + index_lsb * e + offset_lsb;
}

bool buffer_element_in_range(const BufferResource& r, bool structured, uint32_t index, uint64_t offset,
                             uint32_t bytes) {
  if (structured) return index < r.num_records;
  return offset + bytes <= r.num_records;
}

std::string swizzled_access_undefined(const BufferResource& r, bool structured, uint64_t offset,
                                      uint32_t elem_bytes, uint32_t dwords) {
  const uint32_t e = kSwizzleElementBytes;
  if (dwords > 1)
    return fmt::format("a {}-dword access through a swizzled buffer resource (no access may be wider than the "
                       "{}-byte swizzle element)", dwords, e);
  if (offset % e + elem_bytes > e)
    return fmt::format("a {}-byte access at offset {} through a swizzled buffer resource crosses a {}-byte "
                       "swizzle element (swizzled accesses must be dword aligned)", elem_bytes, offset, e);
  if (r.stride % e != 0)
    return fmt::format("a swizzled buffer resource with stride {} (not a multiple of the {}-byte element)",
                       r.stride, e);
  if (structured && offset + elem_bytes > r.stride)
    return fmt::format("a swizzled access at offset {} past the {}-byte record stride", offset, r.stride);
  return {};
}

}  // namespace zyfa::emu
