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
  // The common case of a whole instruction at once: the active lanes of `exec` each access
  // `dwords` whole dwords at byte addresses addr[lane * 4 + k] (PendingOp::addr). When every
  // address is dword-aligned inside the LDS, no dword is split and none races, the accesses
  // are recorded and the answer is true; otherwise nothing is recorded and the caller runs
  // access() (which reports a race exactly where the range-by-range check finds it).
  // [lo, hi) bounds every byte of the instruction (PendingOp::box_lo/box_hi). When the issue
  // knows them, `run` > 0: each lane's dwords are runs of `run` consecutive ones, and
  // `aligned`: every address is a multiple of 4 (PendingOp::lds_run, lds_aligned).
  bool try_whole_dwords(size_t lds_bytes, uint32_t wave, uint32_t pc, const uint64_t* addr, uint64_t exec,
                        int dwords, bool write, uint64_t lo, uint64_t hi, int run = 0, bool aligned = false);
  // An s_barrier released: every access so far is ordered before every later one.
  void next_epoch();

 private:
  // A tag: epoch (bits 31..22; a tag of another epoch is empty), split (bit 21: a dword tag
  // whose bytes carry their own tags for the rest of the epoch), the writing wave + 1 (bits
  // 20..16, 0: none) and the mask of the waves that read (bits 15..0). One word per dword
  // so that a whole instruction's check is a few vector operations per eight dwords.
  static constexpr uint32_t kEpochShift = 22, kSplit = 1u << 21, kWriterShift = 16, kReaders = 0xFFFFu;
  static constexpr uint32_t kMaxEpoch = (1u << (32 - kEpochShift)) - 1;
  // The bounding byte range of each wave's reads and of its writes in this epoch (lo >= hi:
  // none). An access whose range meets none of another wave's ranges it could race with (its
  // writes; for a write, its reads too), in an epoch without split dwords, cannot race: its
  // tags need no test, only recording.
  struct Box {
    uint64_t lo = ~0ull, hi = 0;
  };
  static constexpr int kMaxWaves = 16;
  Box read_box_[kMaxWaves], write_box_[kMaxWaves];
  bool exact_only_ = false;  // a dword was split this epoch (or a wave had no box): no shortcut
  void clear_boxes();
  void note(uint32_t wave, uint64_t lo, uint64_t hi, bool write);
  bool cannot_race(uint32_t wave, uint64_t lo, uint64_t hi, bool write) const;
  void reset(size_t bytes);
  void access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end, Access kind);
  // Checks and records one tag (a dword, or a byte of a split dword) for the byte `byte`.
  void check_one(Executor& x, uint32_t* tags, uint32_t* pcs, size_t i, uint64_t byte, uint32_t wave, uint32_t pc,
                 Access kind);
  bool split_now(size_t d) const { return (dword_[d] >> kEpochShift) == epoch_ && (dword_[d] & kSplit); }
  // Dword d from now on per byte for the rest of the epoch: its tags copied to its 4 bytes.
  void split(size_t d);
  [[noreturn]] static void race(Executor& x, uint32_t wave, uint64_t byte, Access kind, uint32_t other,
                                bool other_writes, uint32_t other_pc);
  size_t bytes_ = 0;
  std::vector<uint32_t> dword_, dword_pc_;  // per dword: tag and the pc of its last write
  std::vector<uint32_t> byte_, byte_pc_;    // per byte, for the bytes of split dwords
  uint32_t epoch_ = 1;
};

}  // namespace zyfa::emu
