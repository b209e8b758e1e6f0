// MessagePack format: https://github.com/msgpack/msgpack/blob/master/spec.md (the subset the
// AMDGPU metadata uses, see LLVM AMDGPUUsage "Code Object V3+ Metadata").
#include "emu/loader/msgpack.h"

#include <cstring>
#include <stdexcept>

namespace zyfa::emu {
namespace {

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}

  MsgValue value(int depth = 0) {
    if (depth > 64) throw std::runtime_error("msgpack: nesting too deep");
    const uint8_t t = byte();
    MsgValue v;
    if (t <= 0x7F) { v.kind = MsgValue::kInt; v.i = t; return v; }
    if (t >= 0xE0) { v.kind = MsgValue::kInt; v.i = static_cast<int8_t>(t); return v; }
    if ((t & 0xF0) == 0x80) return map(t & 0x0F, depth);
    if ((t & 0xF0) == 0x90) return array(t & 0x0F, depth);
    if ((t & 0xE0) == 0xA0) return str(t & 0x1F);
    switch (t) {
      case 0xC0: return v;
      case 0xC2: case 0xC3: v.kind = MsgValue::kBool; v.b = t == 0xC3; return v;
      case 0xC4: return bin(uint_be(1));
      case 0xC5: return bin(uint_be(2));
      case 0xC6: return bin(uint_be(4));
      case 0xCA: { uint32_t u = static_cast<uint32_t>(uint_be(4)); float f; std::memcpy(&f, &u, 4);
                   v.kind = MsgValue::kFloat; v.f = f; return v; }
      case 0xCB: { uint64_t u = uint_be(8); double f; std::memcpy(&f, &u, 8);
                   v.kind = MsgValue::kFloat; v.f = f; return v; }
      case 0xCC: v.kind = MsgValue::kInt; v.i = static_cast<int64_t>(uint_be(1)); return v;
      case 0xCD: v.kind = MsgValue::kInt; v.i = static_cast<int64_t>(uint_be(2)); return v;
      case 0xCE: v.kind = MsgValue::kInt; v.i = static_cast<int64_t>(uint_be(4)); return v;
      case 0xCF: v.kind = MsgValue::kInt; v.i = static_cast<int64_t>(uint_be(8)); return v;
      case 0xD0: v.kind = MsgValue::kInt; v.i = static_cast<int8_t>(uint_be(1)); return v;
      case 0xD1: v.kind = MsgValue::kInt; v.i = static_cast<int16_t>(uint_be(2)); return v;
      case 0xD2: v.kind = MsgValue::kInt; v.i = static_cast<int32_t>(uint_be(4)); return v;
      case 0xD3: v.kind = MsgValue::kInt; v.i = static_cast<int64_t>(uint_be(8)); return v;
      case 0xD9: return str(uint_be(1));
      case 0xDA: return str(uint_be(2));
      case 0xDB: return str(uint_be(4));
      case 0xDC: return array(uint_be(2), depth);
      case 0xDD: return array(uint_be(4), depth);
      case 0xDE: return map(uint_be(2), depth);
      case 0xDF: return map(uint_be(4), depth);
      default: throw std::runtime_error("msgpack: unsupported type byte " + std::to_string(t));
    }
  }

 private:
  uint8_t byte() {
    if (p_ >= n_) throw std::runtime_error("msgpack: truncated");
    return d_[p_++];
  }
  uint64_t uint_be(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | byte();
    return v;
  }
  MsgValue str(uint64_t len) {
    if (len > n_ - p_) throw std::runtime_error("msgpack: string past end");
    MsgValue v;
    v.kind = MsgValue::kString;
    v.s.assign(reinterpret_cast<const char*>(d_ + p_), len);
    p_ += len;
    return v;
  }
  MsgValue bin(uint64_t len) {
    MsgValue v = str(len);
    v.kind = MsgValue::kBinary;
    return v;
  }
  MsgValue array(uint64_t count, int depth) {
    MsgValue v;
    v.kind = MsgValue::kArray;
    for (uint64_t i = 0; i < count; ++i) v.array.push_back(value(depth + 1));
    return v;
  }
  MsgValue map(uint64_t count, int depth) {
    MsgValue v;
    v.kind = MsgValue::kMap;
    for (uint64_t i = 0; i < count; ++i) {
      MsgValue k = value(depth + 1);
      MsgValue x = value(depth + 1);
      v.map.emplace_back(std::move(k), std::move(x));
    }
    return v;
  }

  const uint8_t* d_;
  size_t n_;
  size_t p_ = 0;
};

}  // namespace

const MsgValue* MsgValue::get(const std::string& key) const {
  if (kind != kMap) return nullptr;
  for (const auto& kv : map)
    if (kv.first.kind == kString && kv.first.s == key) return &kv.second;
  return nullptr;
}

MsgValue parse_msgpack(const uint8_t* data, size_t size) {
  Reader r(data, size);
  return r.value();
}

}  // namespace zyfa::emu
