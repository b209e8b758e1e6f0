// Races between the waves of a workgroup on LDS: two accesses of different waves to the same
// bytes, at least one of them a write, with no s_barrier between them (lds_race.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zyfa::emu {

class Executor;

// Per LDS byte: the last writer and the readers since the last barrier release (the epoch).
class LdsRaceShadow {
 public:
  enum class Access : uint8_t { kRead, kWrite };
  struct Range {
    uint64_t begin, end;  // bytes [begin, end)
    bool write;
  };
  // Checks the accesses of one instruction of `wave` (0..15) issued at `pc`, range by range in
  // order, to an LDS of `lds_bytes`, recording each; a race stops the kernel through x.fault().
  void access(Executor& x, size_t lds_bytes, uint32_t wave, uint32_t pc, const Range* ranges, size_t n);
  // An s_barrier released: every access so far is ordered before every later one.
  void next_epoch();

 private:
  void reset(size_t bytes);
  void access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end, Access kind);
  [[noreturn]] static void race(Executor& x, uint32_t wave, uint64_t byte, Access kind, uint32_t other,
                                bool other_writes, uint32_t other_pc);
  std::vector<uint32_t> write_;     // epoch << 5 | (wave + 1) of the last write, 0: none
  std::vector<uint32_t> write_pc_;  // its pc
  std::vector<uint32_t> read_;      // epoch << 16 | mask of the waves that read since the epoch began
  uint32_t epoch_ = 1;
};

}  // namespace zyfa::emu
