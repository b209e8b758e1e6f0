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
//
// The tags are kept per dword: nearly every access reads or writes whole aligned dwords, and
// all four bytes of such a dword then carry the same tags. A dword that an access touches in
// part is split for the rest of the epoch (its tags copied to its four bytes, which are
// checked one by one from then on). Either way a check sees exactly the per-byte state, and a
// race is reported at the same byte as byte-by-byte tracking would.
#include <algorithm>

#include "emu/core/lds_race.h"

#include <fmt/format.h>

#include "emu/core/executor.h"

namespace zyfa::emu {

void LdsRaceShadow::reset(size_t bytes) {
  bytes_ = bytes;
  const size_t dwords = (bytes + 3) / 4;
  dword_.assign(dwords);
  byte_.assign(dwords * 4);
  split_.assign(dwords, 0);
  epoch_ = 1;
}

void LdsRaceShadow::next_epoch() {
  if (bytes_ == 0) return;
  // The read tags hold the epoch in 16 bits: start over (everything before is ordered anyway).
  if (++epoch_ == 0xFFFF) reset(bytes_);
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

void LdsRaceShadow::split(size_t d) {
  for (size_t b = 4 * d; b < 4 * d + 4; ++b) {
    byte_.write[b] = dword_.write[d];
    byte_.write_pc[b] = dword_.write_pc[d];
    byte_.read[b] = dword_.read[d];
  }
  split_[d] = epoch_;
}

inline void LdsRaceShadow::check_one(Executor& x, Tags& t, size_t i, uint64_t byte, uint32_t wave, uint32_t pc,
                                     Access kind) {
  const uint32_t mine = (epoch_ << 5) | (wave + 1);
  const uint32_t bit = 1u << wave;
  const uint32_t w = t.write[i];
  if ((w >> 5) == epoch_ && w != mine) race(x, wave, byte, kind, (w & 31) - 1, true, t.write_pc[i]);
  const uint32_t r = t.read[i];
  const bool same_epoch = (r >> 16) == epoch_;
  if (kind == Access::kWrite) {
    const uint32_t others = same_epoch ? (r & 0xFFFF & ~bit) : 0;
    if (others) race(x, wave, byte, kind, uint32_t(__builtin_ctz(others)), false, 0);
    t.write[i] = mine;
    t.write_pc[i] = pc;
  } else {
    t.read[i] = (same_epoch ? r : (epoch_ << 16)) | bit;
  }
}

inline void LdsRaceShadow::access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end,
                                        Access kind) {
  if (((begin | end) & 3) != 0) {
    // Part of a dword: byte by byte, each touched dword split first.
    for (uint64_t i = begin; i < end; ++i) {
      if (split_[i / 4] != epoch_) split(i / 4);
      check_one(x, byte_, i, i, wave, pc, kind);
    }
    return;
  }
  const size_t d0 = begin / 4, d1 = end / 4;
  // Dword by dword in order (the bytes of a split one one by one): stops at the first racing
  // byte as byte-by-byte tracking would.
  const auto exact = [&] {
    for (size_t d = d0; d < d1; ++d) {
      if (split_[d] == epoch_) {
        for (size_t i = 4 * d; i < 4 * d + 4; ++i) check_one(x, byte_, i, i, wave, pc, kind);
      } else {
        // All four bytes carry these tags: the first byte decides, and the others follow.
        check_one(x, dword_, d, 4 * d, wave, pc, kind);
      }
    }
  };
  // A lane's dword up to b128 (most ranges): the exact loop is cheaper than the set-up of the
  // vectorized test below.
  if (d1 - d0 <= 4) return exact();
  const uint32_t epoch = epoch_;
  const uint32_t mine = (epoch << 5) | (wave + 1);
  const uint32_t bit = 1u << wave;
  // Almost every access is race-free and touches no split dword: test the whole range without
  // branches (the loops vectorize), then record it; otherwise the exact loop.
  const uint32_t* sp = split_.data();
  uint32_t* wr = dword_.write.data();
  uint32_t* rd = dword_.read.data();
  uint32_t bad = 0;
  if (kind == Access::kWrite) {
    for (size_t d = d0; d < d1; ++d) {
      const uint32_t w = wr[d], r = rd[d];
      bad |= uint32_t(sp[d] == epoch) | (uint32_t((w >> 5) == epoch) & uint32_t(w != mine)) |
             (uint32_t((r >> 16) == epoch) & uint32_t((r & 0xFFFF & ~bit) != 0));
    }
    if (!bad) {
      std::fill(wr + d0, wr + d1, mine);
      std::fill(dword_.write_pc.data() + d0, dword_.write_pc.data() + d1, pc);
      return;
    }
  } else {
    for (size_t d = d0; d < d1; ++d) {
      const uint32_t w = wr[d];
      bad |= uint32_t(sp[d] == epoch) | (uint32_t((w >> 5) == epoch) & uint32_t(w != mine));
    }
    if (!bad) {
      const uint32_t fresh = (epoch << 16) | bit;
      for (size_t d = d0; d < d1; ++d) {
        const uint32_t r = rd[d];
        rd[d] = (r >> 16) == epoch ? (r | bit) : fresh;
      }
      return;
    }
  }
  exact();
}

void LdsRaceShadow::access(Executor& x, size_t lds_bytes, uint32_t wave, uint32_t pc, const Range* ranges,
                           size_t n) {
  // The shadow follows the workgroup's LDS size (a later dispatch may allocate more). Bytes
  // past it are no LDS: the access's own bounds check answers for them, not this one.
  if (bytes_ != lds_bytes) reset(lds_bytes);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t end = std::min<uint64_t>(ranges[i].end, lds_bytes);
    if (ranges[i].begin < end)
      access_range(x, wave, pc, ranges[i].begin, end, ranges[i].write ? Access::kWrite : Access::kRead);
  }
}

}  // namespace zyfa::emu
