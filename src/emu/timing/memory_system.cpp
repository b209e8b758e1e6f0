#include "emu/timing/memory_system.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "emu/timing/mi355x.h"

namespace zyfa::emu::timing {
namespace {

// Shares are kept per 2 MiB block of a buffer, not per buffer: one buffer may hold several
// tensors (a device allocation the launch addresses in parts), rarely one block.
constexpr uint64_t kShareBlockBytes = 2u << 20;
uint64_t share_block(uint64_t origin, uint64_t line) { return origin + ((line - origin) & ~(kShareBlockBytes - 1)); }

}  // namespace

std::vector<uint64_t> vmem_line_set(const WorkgroupTrace& t) {
  std::vector<uint64_t> lines;
  for_each_vmem_lines(t, [&](uint64_t, uint64_t, const uint64_t* l, size_t n) { lines.insert(lines.end(), l, l + n); });
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  return lines;
}

HbmShare estimate_hbm_share(const WorkgroupTrace& mine, const std::vector<CoResidentSample>& samples) {
  HbmShare share;
  // The estimated readers of each line besides `mine` (each sample counted once per line).
  std::unordered_map<uint64_t, double> readers;
  for (const CoResidentSample& set : samples) {
    if (set.lines.empty()) continue;
    const double weight = set.others / double(set.lines.size());
    for (const std::vector<uint64_t>* s : set.lines)
      for (uint64_t l : *s) readers[l] += weight;
  }
  if (readers.empty()) return share;
  std::map<uint64_t, std::pair<double, double>> sum;  // block -> (sum of 1/(s+1), lines)
  std::unordered_set<uint64_t> seen;
  for_each_vmem_lines(mine, [&](uint64_t, uint64_t origin, const uint64_t* l, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (!seen.insert(l[i]).second) continue;
      auto it = readers.find(l[i]);
      const double s = it == readers.end() ? 0.0 : it->second;
      auto& e = sum[share_block(origin, l[i])];
      e.first += 1.0 / (s + 1.0);
      e.second += 1.0;
    }
  });
  for (const auto& [block, e] : sum) share[block] = e.first / e.second;
  return share;
}

CuMemory::CuMemory(const CuMemoryConfig& c)
    : share_(c.share), hbm_rate_(c.hbm_bytes_per_clk > 0 ? c.hbm_bytes_per_clk : kHbmBytesPerClk) {}

void CuMemory::drain_write_back(uint64_t t) {
  const double from = std::max(drained_to_, hbm_free_);
  if (double(t) > from) write_back_ = std::max(0.0, write_back_ - (double(t) - from) * hbm_rate_);
  drained_to_ = std::max(drained_to_, double(t));
}

double CuMemory::share_of(uint64_t block) const {
  if (!share_) return 1.0;
  auto it = share_->find(block);
  return it == share_->end() ? 1.0 : it->second;
}

VmemTiming CuMemory::access(uint64_t t, const VmemAccess& a) {
  // The L2 share: a line per line touched, loads and stores alike (a store of a few bytes to
  // each of many lines takes as many L2 requests as a load of those lines), or the bytes
  // written when a store's lines are not known.
  const double l2_bytes = a.store && a.line_count == 0 ? double(a.bytes) : double(a.line_count) * kCacheLineBytes;
  const uint64_t occ = std::max<uint64_t>(1, uint64_t(std::ceil(l2_bytes / kL2BytesPerClkPerCu)));
  const uint64_t start = std::max(t, l2_free_);
  l2_free_ = start + occ;
  l2_busy += occ;
  uint64_t done = l2_free_ + kVmemLatency;

  // Lines missing the L2 come from HBM (loads: this CU's share of them; stores: written back).
  drain_write_back(t);
  double hbm = 0, worst = 0;
  uint64_t fills = 0;  // the latest arrival of a line this load finds still in flight
  missed_.clear();
  for (size_t i = 0; i < a.known; ++i) {
    const uint64_t line = a.lines[i];
    const double share = a.store ? 1.0 : share_of(share_block(a.origin, line));
    ++lines;
    auto it = last_touch_.find(line);
    const bool resident = it != last_touch_.end() && touches_ - it->second < uint64_t(kL2LinesPerCu);
    last_touch_[line] = touches_++;
    if (!resident) {
      dirty_.erase(line);  // evicted since: written back, if it was dirty
      arrives_.erase(line);
    }
    // A load of a resident line hits; a store to a line already dirty merges with it.
    const bool hit = a.store ? !dirty_.insert(line).second : resident;
    if (hit) {
      if (!a.store) {
        ++own_hits;
        auto f = arrives_.find(line);
        if (f != arrives_.end()) fills = std::max(fills, f->second);
      }
      continue;
    }
    if (!a.store) missed_.push_back(line);
    hbm += kCacheLineBytes * share;
    worst = std::max(worst, share);
  }
  if (hbm > 0) {
    hbm_bytes += hbm;
    if (!a.store) {
      hbm_free_ = std::max(double(t), hbm_free_) + hbm / hbm_rate_;
      done = std::max(done, uint64_t(std::ceil(hbm_free_)) + kVmemLatency) + uint64_t(std::lround(worst * kHbmExtraLatency));
    } else {
      // The L2 is write-back: a store is done once in the L2 and its lines are written back
      // while reads leave HBM idle, unless they fill the CU's share of the L2; the excess is
      // written back now, ahead of later reads, and the store waits for it.
      write_back_ += hbm;
      const double excess = write_back_ - double(kL2LinesPerCu) * kCacheLineBytes;
      if (excess > 0) {
        write_back_ -= excess;
        hbm_free_ = std::max(double(t), hbm_free_) + excess / hbm_rate_;
        done = std::max(done, uint64_t(std::ceil(hbm_free_)) + kVmemLatency);
      }
    }
  }
  done = std::max(done, fills);
  for (uint64_t line : missed_) arrives_[line] = done;
  // Keep the recency table to lines that can still hit.
  if (last_touch_.size() > size_t(8 * kL2LinesPerCu)) {
    for (auto it = last_touch_.begin(); it != last_touch_.end();) {
      if (touches_ - it->second < uint64_t(kL2LinesPerCu)) {
        ++it;
        continue;
      }
      dirty_.erase(it->first);
      arrives_.erase(it->first);
      it = last_touch_.erase(it);
    }
  }
  return {start, done};
}

}  // namespace zyfa::emu::timing
