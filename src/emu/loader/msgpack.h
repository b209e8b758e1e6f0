// A minimal MessagePack reader for the AMDGPU code-object metadata note (maps, arrays,
// strings, integers, booleans, floats); enough to read .amdhsa.kernels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zyfa::emu {

struct MsgValue {
  enum Kind { kNil, kBool, kInt, kFloat, kString, kBinary, kArray, kMap } kind = kNil;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<MsgValue> array;
  std::vector<std::pair<MsgValue, MsgValue>> map;

  // Map lookup by string key; nullptr when absent or not a map.
  const MsgValue* get(const std::string& key) const;
};

// Parses one value; throws std::runtime_error on malformed input.
MsgValue parse_msgpack(const uint8_t* data, size_t size);

}  // namespace zyfa::emu
