// Bit counting (C++17 has no <bit>); defined for zero inputs as the bit width.
#pragma once

#include <cstdint>

namespace zyfa::emu {
inline int popcnt(uint64_t v) { return __builtin_popcountll(v); }
inline int clz32(uint32_t v) { return v ? __builtin_clz(v) : 32; }
inline int clz64(uint64_t v) { return v ? __builtin_clzll(v) : 64; }
inline int ctz32(uint32_t v) { return v ? __builtin_ctz(v) : 32; }
inline int ctz64(uint64_t v) { return v ? __builtin_ctzll(v) : 64; }
}  // namespace zyfa::emu
