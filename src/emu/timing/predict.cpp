#include "emu/timing/predict.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "emu/loader/code_object.h"
#include "emu/timing/mi355x.h"

namespace zyfa::emu::timing {

int cu_of_workgroup(uint64_t id) {
  // Round robin over XCDs (id % 8); the XCD's own dispatcher then goes round robin over its
  // CUs. With equal workgroups this is where each one runs; the model does not move work
  // between CUs that finish early (docs/timing-model.md).
  const uint64_t xcd = id % kXcds, within = (id / kXcds) % kCusPerXcd;
  return int(xcd * kCusPerXcd + within);
}

Prediction predict(const Geometry& g, const Runner& run, const DispatchOptions& base, const ModelOptions& m) {
  Prediction p;
  p.kernel = g.kernel;
  const KernelInfo* k = g.object ? g.object->find_kernel(g.kernel) : nullptr;
  if (!k) {
    p.error = fmt::format("kernel '{}' is not in the code object", g.kernel);
    return p;
  }
  const uint64_t n = uint64_t(g.grid[0]) * g.grid[1] * g.grid[2];
  const uint32_t threads = g.block[0] * g.block[1] * g.block[2];
  const uint32_t waves = (threads + 63) / 64;
  const uint32_t lds = k->kd.group_segment_fixed_size + g.dynamic_lds_bytes;
  p.workgroups = n;
  p.resident_per_cu = workgroups_per_cu(*k, waves, lds);
  p.flops = m.flops;

  std::vector<std::vector<uint64_t>> per_cu(kCus);
  for (uint64_t id = 0; id < n; ++id) per_cu[size_t(cu_of_workgroup(id))].push_back(id);
  std::vector<int> chosen;
  for (int c = 0; c < kCus; ++c)
    if (!per_cu[c].empty()) ++p.cus_busy;
  if (m.cus <= 0 || m.cus >= p.cus_busy) {
    for (int c = 0; c < kCus; ++c)
      if (!per_cu[c].empty()) chosen.push_back(c);
  } else {
    // Spread over the dispatch order (the CU of workgroup 0, 1, 2, ...), CU 0 first: the CUs
    // of one XCD take every 8th workgroup, so N = 32 is XCD 0's CUs, every position of its
    // round robin. (Spread over CU numbers instead, N = 32 took one position of each XCD's
    // round robin, where the job tables put the same kind of work.)
    std::vector<int> order;
    for (uint64_t id = 0; id < n && order.size() < size_t(p.cus_busy); ++id) {
      const int c = cu_of_workgroup(id);
      if (per_cu[size_t(c)][0] == id) order.push_back(c);
    }
    for (int i = 0; i < m.cus; ++i) chosen.push_back(order[size_t((int64_t(i) * p.cus_busy) / m.cus)]);
  }

  // Sharing of lines with the workgroups running at the same time as CU c's first ones: the
  // first workgroup of every other CU of its XCD (all of them: which CUs of an XCD read the
  // same lines depends on where the job table put their work, so a few samples could miss
  // them all or find them all), and of `sharing_samples` CUs at the same place of other XCDs
  // (memory_system.h, HbmShare).
  const auto resident = [&](int c) { return std::min<double>(double(per_cu[size_t(c)].size()), p.resident_per_cu); };
  const auto sample_cus = [&](int c, bool same_xcd) {
    std::vector<int> cus;
    if (m.sharing_samples <= 0) return cus;
    const int xcd = c / kCusPerXcd, local = c % kCusPerXcd;
    if (same_xcd) {
      for (int o = xcd * kCusPerXcd; o < (xcd + 1) * kCusPerXcd; ++o)
        if (o != c && !per_cu[size_t(o)].empty()) cus.push_back(o);
      return cus;
    }
    for (int j = 0; j < m.sharing_samples; ++j) {
      const int o = ((xcd + 1 + j * (kXcds - 1) / m.sharing_samples) % kXcds) * kCusPerXcd + local;
      if (o != c && !per_cu[size_t(o)].empty()) cus.push_back(o);
    }
    return cus;
  };
  const auto others = [&](int c, bool same_xcd) {
    double n = same_xcd ? resident(c) - 1 : 0;
    for (int o = 0; o < kCus; ++o)
      if (o != c && (o / kCusPerXcd == c / kCusPerXcd) == same_xcd) n += resident(o);
    return n;
  };

  // Emulates `ids` in batches (all host threads busy, bounded memory), handing each batch's
  // traces to `use` before the next batch runs.
  const auto emulate = [&](const std::vector<uint64_t>& ids, size_t batch_size,
                           const std::function<void(const std::map<uint64_t, const WorkgroupTrace*>&)>& use) {
    for (size_t at = 0; at < ids.size(); at += batch_size) {
      DispatchOptions opt = base;
      std::vector<WorkgroupTrace> traces;
      opt.timing = &traces;
      opt.only_workgroups.assign(ids.begin() + long(at), ids.begin() + long(std::min(ids.size(), at + batch_size)));
      const DispatchResult r = run(opt);
      p.emulated_seconds += r.stats.seconds;
      if (!r.ok) {
        p.error = r.error.empty() ? "the dispatch failed" : r.error;
        return false;
      }
      std::map<uint64_t, const WorkgroupTrace*> by_id;
      for (const WorkgroupTrace& t : traces) by_id[t.linear_id] = &t;
      for (uint64_t id : opt.only_workgroups)
        if (!by_id.count(id)) {
          p.error = fmt::format("internal: no trace of workgroup {}", id);
          return false;
        }
      use(by_id);
    }
    return true;
  };

  // First the samples, kept as line sets only (the same samples serve every CU of an XCD).
  std::set<uint64_t> sample_set;
  for (int c : chosen)
    for (bool same : {true, false})
      for (int o : sample_cus(c, same)) sample_set.insert(per_cu[size_t(o)][0]);
  std::map<uint64_t, std::vector<uint64_t>> sample_lines;
  if (!emulate(std::vector<uint64_t>(sample_set.begin(), sample_set.end()), 16,
               [&](const std::map<uint64_t, const WorkgroupTrace*>& by_id) {
                 for (const auto& [id, t] : by_id) sample_lines[id] = vmem_line_set(*t);
               }))
    return p;

  // Then each chosen CU's own workgroups, replayed by the CU model.
  for (size_t at = 0; at < chosen.size();) {
    std::vector<int> batch;
    std::vector<uint64_t> ids;
    while (at < chosen.size() && (batch.empty() || ids.size() < 16)) {
      batch.push_back(chosen[at]);
      ids.insert(ids.end(), per_cu[size_t(chosen[at])].begin(), per_cu[size_t(chosen[at])].end());
      ++at;
    }
    const bool ok = emulate(ids, ids.size(), [&](const std::map<uint64_t, const WorkgroupTrace*>& by_id) {
      for (int c : batch) {
        std::vector<const WorkgroupTrace*> order;
        for (uint64_t id : per_cu[size_t(c)]) order.push_back(by_id.at(id));
        std::vector<CoResidentSample> samples(2);
        for (int s = 0; s < 2; ++s) {
          for (int o : sample_cus(c, s == 0)) samples[size_t(s)].lines.push_back(&sample_lines.at(per_cu[size_t(o)][0]));
          samples[size_t(s)].others = others(c, s == 0);
        }
        const HbmShare share = estimate_hbm_share(*order[0], samples);
        const CuStats cu = simulate_cu(*g.object, *k, lds, order, nullptr, {&share, hbm_bytes_per_clk_per_cu(p.cus_busy)});
        if (p.slowest_cu < 0 || cu.cycles > p.stats.cycles) p.slowest_cu = c;
        if (p.cus_simulated == 0 || cu.cycles < p.fastest_cu_cycles) p.fastest_cu_cycles = cu.cycles;
        p.stats.add(cu);
        ++p.cus_simulated;
      }
    });
    if (!ok) return p;
  }
  p.cycles = p.stats.cycles;
  p.kernel_us = double(p.cycles) / (kSustainedClockGhz * 1e3) + kLaunchOverheadUs;
  p.kernel_us_peak = double(p.cycles) / (kPeakClockGhz * 1e3) + kLaunchOverheadUs;
  p.ok = true;
  return p;
}

std::string Prediction::json() const {
  if (!ok) return fmt::format("{{\"model\": \"mi355x\", \"error\": \"{}\"}}", error);
  const double simd_cycles = double(cycles) * kSimdsPerCu * std::max(cus_simulated, 1);
  const double cu_cycles = double(cycles) * std::max(cus_simulated, 1);
  const double wave = std::max<double>(double(stats.wave_cycles), 1.0);
  std::string stalls;
  for (int i = 0; i < kStallCount; ++i)
    stalls += fmt::format("{}\"{}\": {:.1f}", i ? ", " : "", stall_name(i), 100.0 * double(stats.stall[i]) / wave);
  std::string tf;
  if (flops > 0) tf = fmt::format(", \"tflops\": {:.1f}", flops / (kernel_us * 1e-6) / 1e12);
  return fmt::format(
      "{{\"model\": \"mi355x\", \"kernel_us\": {:.3f}{}, \"clock_ghz\": {}, \"kernel_us_at_peak_clock\": {:.3f}, "
      "\"peak_clock_ghz\": {}, \"cycles\": {}, \"workgroups\": {}, "
      "\"cus_busy\": {}, \"cus_simulated\": {}, \"slowest_cu\": {}, \"fastest_cu_cycles\": {}, "
      "\"resident_workgroups_per_cu\": {}, \"matrix_busy_pct\": {:.1f}, "
      "\"valu_busy_pct\": {:.1f}, \"lds_busy_pct\": {:.1f}, \"vmem_busy_pct\": {:.1f}, \"hbm_busy_pct\": {:.1f}, "
      "\"l2_own_hit_pct\": {:.1f}, \"instructions\": {}, "
      "\"stall_pct_of_wave_time\": {{{}}}, \"emulated_s\": {:.2f}}}",
      kernel_us, tf, kSustainedClockGhz, kernel_us_peak, kPeakClockGhz, cycles, workgroups, cus_busy, cus_simulated,
      slowest_cu, fastest_cu_cycles, resident_per_cu,
      100.0 * double(stats.matrix_busy) / simd_cycles, 100.0 * double(stats.valu_busy) / simd_cycles,
      100.0 * double(stats.lds_busy) / cu_cycles, 100.0 * double(stats.vmem_busy) / cu_cycles,
      100.0 * stats.hbm_bytes / hbm_bytes_per_clk_per_cu(cus_busy) / cu_cycles,
      100.0 * double(stats.l2_own_hits) / std::max<double>(double(stats.l2_lines), 1.0), stats.instructions,
      stalls, emulated_seconds);
}

}  // namespace zyfa::emu::timing
