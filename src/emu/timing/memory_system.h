// The vector memory path of one modelled MI355X CU (docs/timing-model.md, "Memory system"):
// every access goes through the CU's share of the XCD's L2 bandwidth; a line the CU touched
// recently is still in the L2; any other line is fetched from HBM, once for all the
// workgroups of the XCD that read it at the same time, through the CU's share of HBM
// bandwidth. Stores write their lines back to HBM when reads leave it idle, and wait only when
// the lines not yet written back fill the CU's share of the L2.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "emu/emulator.h"

namespace zyfa::emu::timing {

// Per 2 MiB block of a buffer (memory_system.cpp, share_block): the fraction of a missing
// line's bytes that this CU's read brings. A line that s other workgroups read at once comes
// from HBM once for the s + 1 of them: the others of its XCD hit in its L2, those of other XCDs
// in the 256 MiB MALL (Infinity Cache) in front of HBM. Each pays 1 / (s + 1). Absent: 1.
using HbmShare = std::map<uint64_t, double>;

// Calls fn(index, origin, lines, n) for each vector memory instruction of the trace that recorded its
// lines (WorkgroupTrace::lines).
template <class Fn>
void for_each_vmem_lines(const WorkgroupTrace& t, Fn&& fn) {
  for (size_t wi = 0; wi < t.lines.size(); ++wi) {
    const std::vector<uint64_t>& w = t.lines[wi];
    for (size_t i = 0; i + 1 < w.size();) {
      const size_t n = t.waves[wi][w[i]].cost;
      fn(w[i], w[i + 1], w.data() + i + 2, n);
      i += 2 + n;
    }
  }
}

// The distinct lines a workgroup's vector memory instructions touched (sorted), which is all
// the sharing estimate needs of a sampled workgroup: its trace need not be kept.
std::vector<uint64_t> vmem_line_set(const WorkgroupTrace& t);

// Workgroups sampled from those running at the same time as one, standing for `others` of
// them: a line that c of the samples read is read by about c * others / samples.
struct CoResidentSample {
  std::vector<const std::vector<uint64_t>*> lines;  // vmem_line_set of each sample
  double others = 0;
};
HbmShare estimate_hbm_share(const WorkgroupTrace& mine, const std::vector<CoResidentSample>& samples);

struct VmemAccess {
  bool store = false;
  uint32_t line_count = 0;  // lines touched (IssueRecord::cost)
  uint32_t bytes = 0;       // bytes moved by the lanes
  uint64_t origin = 0;      // the buffer, when the lines are known
  const uint64_t* lines = nullptr;
  size_t known = 0;         // lines known (0 when the trace has none for this access)
};

// What a CU's memory path sees of the rest of the chip.
struct CuMemoryConfig {
  const HbmShare* share = nullptr;        // null: every missing line from HBM
  double hbm_bytes_per_clk = 0;           // the CU's share of HBM bandwidth (0: the CU alone)
};

struct VmemTiming {
  uint64_t start = 0;  // its turn on the L2 path begins
  uint64_t done = 0;   // it completes (a load's data is back; a store is in the L2)
};

class CuMemory {
 public:
  explicit CuMemory(const CuMemoryConfig& c);
  VmemTiming access(uint64_t t, const VmemAccess& a);
  uint64_t l2_busy = 0;       // clocks the CU's L2 share was busy
  double hbm_bytes = 0;       // bytes the CU drew from HBM (its share of shared lines)
  uint64_t lines = 0, own_hits = 0;

 private:
  double share_of(uint64_t origin) const;
  void drain_write_back(uint64_t t);  // HBM idle until t writes lines back
  const HbmShare* share_;
  double hbm_rate_;
  std::unordered_map<uint64_t, uint64_t> last_touch_;  // line -> lines touched before it, last time
  // Lines written since they came into the L2: a later store to one merges with the bytes
  // already waiting for write-back (the L2 is write-back), so the line goes to HBM once.
  std::unordered_set<uint64_t> dirty_;
  // When each line still coming from HBM arrives: a load of a line whose fill is in flight
  // hits in the L2 but its data comes with the fill, not an L2 latency after the request.
  std::unordered_map<uint64_t, uint64_t> arrives_;
  std::vector<uint64_t> missed_;  // (scratch of access: the lines a load brings from HBM)
  uint64_t touches_ = 0;
  uint64_t l2_free_ = 0;
  double hbm_free_ = 0;      // when HBM has served this CU's reads (and forced write-backs)
  double write_back_ = 0;    // bytes stored, not yet written back
  double drained_to_ = 0;
};

}  // namespace zyfa::emu::timing
