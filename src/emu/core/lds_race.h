// Races between the waves of a workgroup on LDS: two accesses of different waves to the same
// bytes, at least one of them a write, with no s_barrier between them (lds_race.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zyfa::emu {

class Executor;

// Per LDS dword, and per byte for the dwords accessed in parts: the last writer and the
// readers since the last barrier release (the epoch).
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
  // One tag set: the last write (epoch << 5 | (wave + 1), 0: none) and its pc, and the reads
  // (epoch << 16 | mask of the waves that read since the epoch began).
  struct Tags {
    std::vector<uint32_t> write, write_pc, read;
    void assign(size_t n) {
      write.assign(n, 0);
      write_pc.assign(n, 0);
      read.assign(n, 0);
    }
  };
  void reset(size_t bytes);
  void access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end, Access kind);
  // Checks and records one tag (a dword, or a byte of a split dword) for the byte `byte`.
  void check_one(Executor& x, Tags& t, size_t i, uint64_t byte, uint32_t wave, uint32_t pc, Access kind);
  // Dword d from now on per byte for the rest of the epoch: its tags copied to its 4 bytes.
  void split(size_t d);
  [[noreturn]] static void race(Executor& x, uint32_t wave, uint64_t byte, Access kind, uint32_t other,
                                bool other_writes, uint32_t other_pc);
  size_t bytes_ = 0;
  Tags dword_;                  // per dword, valid for dwords not split in this epoch
  Tags byte_;                   // per byte, valid for the bytes of dwords split in this epoch
  std::vector<uint32_t> split_; // per dword: the epoch in which it was split (0: never)
  uint32_t epoch_ = 1;
};

}  // namespace zyfa::emu
