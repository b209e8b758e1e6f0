// LDS races between the waves of a workgroup. The waves of a workgroup run concurrently and
// LDS operations of different waves may be reordered relative to each other (LLVM
// AMDGPUUsage, GFX942 memory model: only s_waitcnt lgkmcnt(0) plus s_barrier synchronizes
// LDS between the wavefronts of a work-group). Two accesses of different waves to the same
// byte with no s_barrier between them, at least one a write, are a race: the result depends
// on timing. The random interleaving shows such a race only when it happens to reorder the
// two; this check stops the kernel at the second access for every interleaving.
//
// Model: an epoch is the time between two barrier releases; a wave's access belongs to the
// epoch in which it issues (issue order is program order; an access still in flight at a
// release is checked by memory_order.cpp). Per byte: the wave that last wrote it in the
// current epoch and the set of waves that read it. A write by wave W races with another
// wave's write or read of the epoch; a read races with another wave's write of the epoch.
// LDS atomics are not tracked (they are meant to be used concurrently; our kernels use none).
#include <algorithm>

#include "emu/core/lds_race.h"

#include <fmt/format.h>

#include "emu/core/executor.h"

namespace zyfa::emu {

void LdsRaceShadow::reset(size_t bytes) {
  write_.assign(bytes, 0);
  write_pc_.assign(bytes, 0);
  read_.assign(bytes, 0);
  epoch_ = 1;
}

void LdsRaceShadow::next_epoch() {
  if (write_.empty()) return;
  // The read tags hold the epoch in 16 bits: start over (everything before is ordered anyway).
  if (++epoch_ == 0xFFFF) reset(write_.size());
}

void LdsRaceShadow::race(Executor& x, uint32_t wave, uint64_t byte, Access kind, uint32_t other, bool other_writes,
                         uint32_t other_pc) {
  const std::string first = other_writes ? fmt::format("written by wave {} at pc 0x{:x}", other, other_pc)
                                         : fmt::format("read by wave {}", other);
  x.fault(fmt::format("LDS race: wave {} {} LDS byte 0x{:x} {}, with no s_barrier between the two accesses "
                      "(different waves touching the same LDS bytes, one of them writing, need s_waitcnt "
                      "lgkmcnt(0) and s_barrier in between)",
                      wave, kind == Access::kWrite ? "writes" : "reads", byte, first));
}

inline void LdsRaceShadow::access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end,
                                        Access kind) {
  const uint32_t epoch = epoch_;
  const uint32_t mine = (epoch << 5) | (wave + 1);
  const uint32_t bit = 1u << wave;
  // Almost every access is race-free: test the whole range without branches (the loops
  // vectorize), then record it. Only a range with a race takes the byte-by-byte loop below,
  // which stops at the first racing byte exactly as if there were no fast path.
  uint32_t* wr = write_.data();
  uint32_t* rd = read_.data();
  uint32_t bad = 0;
  if (kind == Access::kWrite) {
    for (uint64_t i = begin; i < end; ++i) {
      const uint32_t w = wr[i], r = rd[i];
      bad |= (uint32_t((w >> 5) == epoch) & uint32_t(w != mine)) |
             (uint32_t((r >> 16) == epoch) & uint32_t((r & 0xFFFF & ~bit) != 0));
    }
    if (!bad) {
      std::fill(wr + begin, wr + end, mine);
      std::fill(write_pc_.data() + begin, write_pc_.data() + end, pc);
      return;
    }
  } else {
    for (uint64_t i = begin; i < end; ++i) {
      const uint32_t w = wr[i];
      bad |= uint32_t((w >> 5) == epoch) & uint32_t(w != mine);
    }
    if (!bad) {
      const uint32_t fresh = (epoch << 16) | bit;
      for (uint64_t i = begin; i < end; ++i) {
        const uint32_t r = rd[i];
        rd[i] = (r >> 16) == epoch ? (r | bit) : fresh;
      }
      return;
    }
  }
  for (uint64_t i = begin; i < end; ++i) {
    const uint32_t w = write_[i];
    if ((w >> 5) == epoch_ && w != mine) race(x, wave, i, kind, (w & 31) - 1, true, write_pc_[i]);
    const uint32_t r = read_[i];
    const bool same_epoch = (r >> 16) == epoch_;
    if (kind == Access::kWrite) {
      const uint32_t others = same_epoch ? (r & 0xFFFF & ~bit) : 0;
      if (others) race(x, wave, i, kind, uint32_t(__builtin_ctz(others)), false, 0);
      write_[i] = mine;
      write_pc_[i] = pc;
    } else {
      read_[i] = (same_epoch ? r : (epoch_ << 16)) | bit;
    }
  }
}

void LdsRaceShadow::access(Executor& x, size_t lds_bytes, uint32_t wave, uint32_t pc, const Range* ranges,
                           size_t n) {
  // The shadow follows the workgroup's LDS size (a later dispatch may allocate more). Bytes
  // past it are no LDS: the access's own bounds check answers for them, not this one.
  if (write_.size() != lds_bytes) reset(lds_bytes);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t end = std::min<uint64_t>(ranges[i].end, lds_bytes);
    if (ranges[i].begin < end)
      access_range(x, wave, pc, ranges[i].begin, end, ranges[i].write ? Access::kWrite : Access::kRead);
  }
}

}  // namespace zyfa::emu
