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
// The tags are kept per dword, one 32-bit word each: nearly every access reads or writes
// whole aligned dwords, and all four bytes of such a dword then carry the same tags. A dword that an access touches in
// part is split for the rest of the epoch (its tags copied to its four bytes, which are
// checked one by one from then on). Either way a check sees exactly the per-byte state, and a
// race is reported at the same byte as byte-by-byte tracking would. An instruction whose lanes
// all access whole aligned dwords is checked in one pass over all of them and recorded in a
// second (try_whole_dwords); accesses of one wave never race with each other, so the order
// within the instruction does not matter unless there is a race, and then the range-by-range
// check runs instead and reports it.
#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "emu/core/lds_race.h"

#include <fmt/format.h>

#include "emu/core/executor.h"

namespace zyfa::emu {

void LdsRaceShadow::clear_boxes() {
  for (int i = 0; i < kMaxWaves; ++i) read_box_[i] = write_box_[i] = Box{};
  exact_only_ = false;
}

void LdsRaceShadow::note(uint32_t wave, uint64_t lo, uint64_t hi, bool write) {
  if (wave >= kMaxWaves) {  // no box for it (a workgroup has at most 16 waves): no shortcut
    exact_only_ = true;
    return;
  }
  Box& b = (write ? write_box_ : read_box_)[wave];
  b.lo = std::min(b.lo, lo);
  b.hi = std::max(b.hi, hi);
}

bool LdsRaceShadow::cannot_race(uint32_t wave, uint64_t lo, uint64_t hi, bool write) const {
  if (exact_only_ || wave >= kMaxWaves) return false;
  for (int i = 0; i < kMaxWaves; ++i) {
    if (uint32_t(i) == wave) continue;
    if (write_box_[i].lo < hi && lo < write_box_[i].hi) return false;
    if (write && read_box_[i].lo < hi && lo < read_box_[i].hi) return false;
  }
  return true;
}

void LdsRaceShadow::reset(size_t bytes) {
  clear_boxes();
  bytes_ = bytes;
  const size_t dwords = (bytes + 3) / 4;
  dword_.assign(dwords, 0);
  dword_pc_.assign(dwords, 0);
  byte_.assign(dwords * 4, 0);
  byte_pc_.assign(dwords * 4, 0);
  epoch_ = 1;
}

void LdsRaceShadow::next_epoch() {
  if (bytes_ == 0) return;
  clear_boxes();
  // The tags hold the epoch in 10 bits: start over (everything before is ordered anyway).
  if (++epoch_ == kMaxEpoch) reset(bytes_);
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
  exact_only_ = true;
  const uint32_t t = (dword_[d] >> kEpochShift) == epoch_ ? dword_[d] : 0;
  for (size_t b = 4 * d; b < 4 * d + 4; ++b) {
    byte_[b] = t;
    byte_pc_[b] = dword_pc_[d];
  }
  dword_[d] = (epoch_ << kEpochShift) | kSplit;
}

inline void LdsRaceShadow::check_one(Executor& x, uint32_t* tags, uint32_t* pcs, size_t i, uint64_t byte,
                                     uint32_t wave, uint32_t pc, Access kind) {
  const uint32_t me = wave + 1, bit = 1u << wave;
  const uint32_t t = tags[i];
  const bool same_epoch = (t >> kEpochShift) == epoch_;
  const uint32_t writer = same_epoch ? (t >> kWriterShift) & 31 : 0;
  const uint32_t readers = same_epoch ? t & kReaders : 0;
  // Under the hardware rules a pair with a load to LDS in it may be ordered by timing
  // (Executor::order_lds_race, lds_dma_order.cpp); every other pair is a race.
  if (writer && writer != me && !x.order_lds_race(writer - 1, byte, true)) race(x, wave, byte, kind, writer - 1, true, pcs[i]);
  if (kind == Access::kWrite) {
    for (uint32_t others = readers & ~bit; others; others &= others - 1) {
      const uint32_t other = uint32_t(__builtin_ctz(others));
      if (!x.order_lds_race(other, byte, false)) race(x, wave, byte, kind, other, false, 0);
    }
    tags[i] = (epoch_ << kEpochShift) | (me << kWriterShift) | readers;
    pcs[i] = pc;
  } else {
    tags[i] = (epoch_ << kEpochShift) | (writer << kWriterShift) | readers | bit;
  }
}

inline void LdsRaceShadow::access_range(Executor& x, uint32_t wave, uint32_t pc, uint64_t begin, uint64_t end,
                                        Access kind) {
  // Byte by byte for the bytes of split dwords and of dwords accessed in part (split first),
  // dword by dword otherwise, in order: stops at the first racing byte as byte-by-byte
  // tracking would.
  for (uint64_t i = begin; i < end;) {
    const size_t d = i / 4;
    const bool whole = i % 4 == 0 && i + 4 <= end;
    if (!whole && !split_now(d)) split(d);
    if (split_now(d)) {
      check_one(x, byte_.data(), byte_pc_.data(), i, i, wave, pc, kind);
      ++i;
    } else {
      // All four bytes carry these tags: the first byte decides, and the others follow.
      check_one(x, dword_.data(), dword_pc_.data(), d, i, wave, pc, kind);
      i += 4;
    }
  }
}

void LdsRaceShadow::access(Executor& x, size_t lds_bytes, uint32_t wave, uint32_t pc, const Range* ranges,
                           size_t n) {
  // The shadow follows the workgroup's LDS size (a later dispatch may allocate more). Bytes
  // past it are no LDS: the access's own bounds check answers for them, not this one.
  if (bytes_ != lds_bytes) reset(lds_bytes);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t end = std::min<uint64_t>(ranges[i].end, lds_bytes);
    if (ranges[i].begin < end) {
      note(wave, ranges[i].begin, end, ranges[i].write);
      access_range(x, wave, pc, ranges[i].begin, end, ranges[i].write ? Access::kWrite : Access::kRead);
    }
  }
}

namespace {

constexpr uint32_t kEpochMask = ~0u << 22, kSplitBit = 1u << 21, kWriterBits = 31u << 16, kKept = 0x1FFFFFu;

// A group of kGroup consecutive dword tags (1, 2 or 4) at once: SSE2 where there is SSE2 (the
// x86-64 baseline), a loop otherwise.
#if defined(__SSE2__)
template <int kGroup>
inline __m128i load_group(const uint32_t* p) {
  if (kGroup == 4) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if (kGroup == 2) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_cvtsi32_si128(int(*p));
}
template <int kGroup>
inline void store_group(uint32_t* p, __m128i v) {
  if (kGroup == 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  else if (kGroup == 2) _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v);
  else *p = uint32_t(_mm_cvtsi128_si32(v));
}
#endif

// The lanes of `exec` access `chunks` groups of kGroup consecutive dwords each, group c of lane
// l starting at byte addr[l * 4 + c * kGroup]. Nonzero when an address is misaligned or past
// `n` dwords, or a tag of this epoch is split, written by another wave, or (for a write) read
// by another wave.
template <int kGroup>
uint32_t test_groups(const uint32_t* tags, size_t n, const uint64_t* addr, uint64_t exec, int chunks, uint32_t epoch_tag,
                     uint32_t me_tag, uint32_t reader_mask) {
  uint64_t bad_addr = 0;
#if defined(__SSE2__)
  const __m128i em = _mm_set1_epi32(int(kEpochMask)), wm = _mm_set1_epi32(int(kWriterBits));
  const __m128i rm = _mm_set1_epi32(int(reader_mask | kSplitBit)), zero = _mm_setzero_si128();
  const __m128i mine = _mm_set1_epi32(int(epoch_tag | me_tag));
  __m128i bad = zero;
#else
  uint32_t bad = 0;
#endif
  for (uint64_t m = exec; m; m &= m - 1) {
    const int l = __builtin_ctzll(m);
    for (int c = 0; c < chunks; ++c) {
      const uint64_t a = addr[l * 4 + c * kGroup];
      const uint64_t d = a >> 2;
      const bool ok = (a & 3) == 0 && d + kGroup <= n;
      bad_addr |= uint64_t(!ok);
      const uint32_t* p = tags + (ok ? d : 0);
#if defined(__SSE2__)
      const __m128i t = load_group<kGroup>(p);
      const __m128i x = _mm_xor_si128(t, mine);
      // This epoch (x's epoch bits zero) and: split or read by another wave (the reader mask
      // covers the split bit), or a writer that is not this wave (t's writer bits nonzero
      // and x's nonzero).
      const __m128i same = _mm_cmpeq_epi32(_mm_and_si128(x, em), zero);
      const __m128i no_writer = _mm_cmpeq_epi32(_mm_and_si128(t, wm), zero);
      const __m128i writer_me = _mm_cmpeq_epi32(_mm_and_si128(x, wm), zero);
      const __m128i reads_ok = _mm_cmpeq_epi32(_mm_and_si128(t, rm), zero);
      const __m128i fine = _mm_and_si128(_mm_or_si128(no_writer, writer_me), reads_ok);
      bad = _mm_or_si128(bad, _mm_andnot_si128(fine, same));
#else
      for (int k = 0; k < kGroup; ++k) {
        const uint32_t t = p[k], x = t ^ epoch_tag ^ me_tag;
        const bool same = (x & kEpochMask) == 0;
        const bool fine = ((t & kWriterBits) == 0 || (x & kWriterBits) == 0) && (t & (reader_mask | kSplitBit)) == 0;
        bad |= uint32_t(same && !fine);
      }
#endif
    }
  }
#if defined(__SSE2__)
  if (kGroup < 4) bad = kGroup == 2 ? _mm_move_epi64(bad) : _mm_and_si128(bad, _mm_cvtsi32_si128(-1));
  return uint32_t(bad_addr != 0) | uint32_t(_mm_movemask_epi8(bad) != 0);
#else
  return uint32_t(bad_addr != 0) | bad;
#endif
}

template <int kGroup>
void record_groups(uint32_t* tags, uint32_t* pcs, const uint64_t* addr, uint64_t exec, int chunks, uint32_t epoch_tag,
                   uint32_t me_tag, uint32_t bit, uint32_t pc, bool write) {
#if defined(__SSE2__)
  const __m128i em = _mm_set1_epi32(int(kEpochMask)), et = _mm_set1_epi32(int(epoch_tag));
  const __m128i keep = _mm_set1_epi32(int(write ? 0xFFFFu : kKept));
  const __m128i add = _mm_set1_epi32(int(epoch_tag | (write ? me_tag : bit))), pcv = _mm_set1_epi32(int(pc));
#endif
  for (uint64_t m = exec; m; m &= m - 1) {
    const int l = __builtin_ctzll(m);
    for (int c = 0; c < chunks; ++c) {
      const uint64_t d = addr[l * 4 + c * kGroup] >> 2;
#if defined(__SSE2__)
      const __m128i t = load_group<kGroup>(tags + d);
      const __m128i same = _mm_cmpeq_epi32(_mm_and_si128(t, em), et);
      // A write keeps this epoch's readers (its own, as there was no race) and becomes the
      // writer; a read keeps the writer and readers and adds itself.
      store_group<kGroup>(tags + d, _mm_or_si128(_mm_and_si128(_mm_and_si128(t, same), keep), add));
      if (write) store_group<kGroup>(pcs + d, pcv);
#else
      for (int k = 0; k < kGroup; ++k) {
        const uint32_t t = tags[d + k];
        const uint32_t kept = (t & kEpochMask) == epoch_tag ? t & (write ? 0xFFFFu : kKept) : 0;
        tags[d + k] = kept | epoch_tag | (write ? me_tag : bit);
        if (write) pcs[d + k] = pc;
      }
#endif
    }
  }
}

}  // namespace

bool LdsRaceShadow::try_whole_dwords(size_t lds_bytes, uint32_t wave, uint32_t pc, const uint64_t* addr,
                                     uint64_t exec, int dwords, bool write, uint64_t lo, uint64_t hi, int run,
                                     bool aligned) {
  if (bytes_ != lds_bytes) reset(lds_bytes);
  const size_t n = lds_bytes / 4;  // whole dwords inside the LDS
  if (n == 0 || exec == 0 || dwords < 1 || dwords > 4) return false;
  // The dwords of a lane in groups of consecutive ones: the same split for every lane (the
  // offsets between a lane's addresses are the instruction's), checked per lane below.
  const int l0 = __builtin_ctzll(exec);
  const uint64_t* a0 = addr + l0 * 4;
  const auto consecutive = [&](const uint64_t* a, int g) {
    for (int c = 0; c < dwords / g; ++c)
      for (int k = 1; k < g; ++k)
        if (a[c * g + k] != a[c * g] + 4 * uint64_t(k)) return false;
    return true;
  };
  int group = 1;
  if (run > 0 && dwords % run == 0) {
    // Runs the issue built: groups of 4 or 2 inside each run, no per-lane look.
    group = run % 4 == 0 ? 4 : run % 2 == 0 ? 2 : 1;
  } else {
    for (int g : {4, 2}) {
      if (dwords % g == 0 && consecutive(a0, g)) {
        group = g;
        break;
      }
    }
    if (group > 1)
      for (uint64_t m = exec; m; m &= m - 1)
        if (!consecutive(addr + __builtin_ctzll(m) * 4, group)) return false;
  }
  const int chunks = dwords / group;
  const uint32_t epoch_tag = epoch_ << kEpochShift, me_tag = (wave + 1) << kWriterShift, bit = 1u << wave;
  const uint32_t reader_mask = write ? (kReaders & ~bit) : 0;
  uint32_t* tags = dword_.data();
  uint32_t* pcs = dword_pc_.data();
  // Nothing of another wave in reach (and every group inside the LDS, dword-aligned): the
  // test below would pass, so only the record is made.
  if (hi <= 4 * uint64_t(n) && lo < hi && cannot_race(wave, lo, hi, write)) {
    uint64_t misaligned = 0;
    for (uint64_t m = aligned ? 0 : exec; m; m &= m - 1)
      for (int c = 0; c < chunks; ++c) misaligned |= addr[__builtin_ctzll(m) * 4 + c * group];
    if ((misaligned & 3) == 0) {
      switch (group) {
        case 4: record_groups<4>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write); break;
        case 2: record_groups<2>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write); break;
        default: record_groups<1>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write); break;
      }
      note(wave, lo, hi, write);
      return true;
    }
  }
  switch (group) {
    case 4:
      if (test_groups<4>(tags, n, addr, exec, chunks, epoch_tag, me_tag, reader_mask)) return false;
      record_groups<4>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write);
      break;
    case 2:
      if (test_groups<2>(tags, n, addr, exec, chunks, epoch_tag, me_tag, reader_mask)) return false;
      record_groups<2>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write);
      break;
    default:
      if (test_groups<1>(tags, n, addr, exec, chunks, epoch_tag, me_tag, reader_mask)) return false;
      record_groups<1>(tags, pcs, addr, exec, chunks, epoch_tag, me_tag, bit, pc, write);
      break;
  }
  note(wave, lo, hi, write);
  return true;
}

}  // namespace zyfa::emu
