#include "emu/timing/predict.h"

#include <algorithm>
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
    for (int i = 0; i < m.cus; ++i) {
      // Spread over XCDs and CU positions; CU 0 first.
      const int pick = int((int64_t(i) * p.cus_busy) / m.cus);
      int seen = -1;
      for (int c = 0; c < kCus; ++c)
        if (!per_cu[c].empty() && ++seen == pick) { chosen.push_back(c); break; }
    }
  }

  // Sharing of lines with the workgroups running at the same time as CU c's first ones: the
  // first workgroup of `sharing_samples` other CUs of its XCD, spread over the XCD, and of as
  // many CUs at the same place of other XCDs (memory_system.h, HbmShare).
  const auto resident = [&](int c) { return std::min<double>(double(per_cu[size_t(c)].size()), p.resident_per_cu); };
  const auto sample_cus = [&](int c, bool same_xcd) {
    std::vector<int> cus;
    const int xcd = c / kCusPerXcd, local = c % kCusPerXcd, n = std::max(m.sharing_samples, 1);
    for (int j = 0; j < m.sharing_samples; ++j) {
      const int o = same_xcd ? xcd * kCusPerXcd + (local + 1 + j * (kCusPerXcd - 1) / n) % kCusPerXcd
                             : ((xcd + 1 + j * (kXcds - 1) / n) % kXcds) * kCusPerXcd + local;
      if (o != c && !per_cu[size_t(o)].empty()) cus.push_back(o);
    }
    return cus;
  };
  const auto sample_ids = [&](int c) {
    std::vector<uint64_t> ids;
    for (bool same : {true, false})
      for (int o : sample_cus(c, same)) ids.push_back(per_cu[size_t(o)][0]);
    return ids;
  };
  const auto others = [&](int c, bool same_xcd) {
    double n = same_xcd ? resident(c) - 1 : 0;
    for (int o = 0; o < kCus; ++o)
      if (o != c && (o / kCusPerXcd == c / kCusPerXcd) == same_xcd) n += resident(o);
    return n;
  };

  // Emulate the chosen CUs' workgroups (and their samples) in batches (all host threads
  // busy, bounded memory).
  size_t at = 0;
  while (at < chosen.size()) {
    std::vector<int> batch;
    DispatchOptions opt = base;
    opt.only_workgroups.clear();
    std::vector<WorkgroupTrace> traces;
    opt.timing = &traces;
    std::set<uint64_t> ids;
    while (at < chosen.size() && (batch.empty() || ids.size() < 16)) {
      batch.push_back(chosen[at]);
      for (uint64_t id : per_cu[size_t(chosen[at])]) ids.insert(id);
      for (uint64_t id : sample_ids(chosen[at])) ids.insert(id);
      ++at;
    }
    opt.only_workgroups.assign(ids.begin(), ids.end());
    const DispatchResult r = run(opt);
    p.emulated_seconds += r.stats.seconds;
    if (!r.ok) {
      p.error = r.error.empty() ? "the dispatch failed" : r.error;
      return p;
    }
    std::map<uint64_t, const WorkgroupTrace*> by_id;
    for (const WorkgroupTrace& t : traces) by_id[t.linear_id] = &t;
    for (int c : batch) {
      std::vector<const WorkgroupTrace*> order;
      for (uint64_t id : per_cu[size_t(c)]) {
        auto it = by_id.find(id);
        if (it == by_id.end()) {
          p.error = fmt::format("internal: no trace of workgroup {}", id);
          return p;
        }
        order.push_back(it->second);
      }
      std::vector<CoResidentSample> samples(2);
      for (int s = 0; s < 2; ++s) {
        for (int o : sample_cus(c, s == 0)) samples[size_t(s)].traces.push_back(by_id.at(per_cu[size_t(o)][0]));
        samples[size_t(s)].others = others(c, s == 0);
      }
      const HbmShare share = estimate_hbm_share(*order[0], samples);
      p.stats.add(simulate_cu(*g.object, *k, lds, order, nullptr, {&share, hbm_bytes_per_clk_per_cu(p.cus_busy)}));
      ++p.cus_simulated;
    }
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
      "\"cus_busy\": {}, \"cus_simulated\": {}, \"resident_workgroups_per_cu\": {}, \"matrix_busy_pct\": {:.1f}, "
      "\"valu_busy_pct\": {:.1f}, \"lds_busy_pct\": {:.1f}, \"vmem_busy_pct\": {:.1f}, \"hbm_busy_pct\": {:.1f}, "
      "\"l2_own_hit_pct\": {:.1f}, \"instructions\": {}, "
      "\"stall_pct_of_wave_time\": {{{}}}, \"emulated_s\": {:.2f}}}",
      kernel_us, tf, kSustainedClockGhz, kernel_us_peak, kPeakClockGhz, cycles, workgroups, cus_busy, cus_simulated, resident_per_cu,
      100.0 * double(stats.matrix_busy) / simd_cycles, 100.0 * double(stats.valu_busy) / simd_cycles,
      100.0 * double(stats.lds_busy) / cu_cycles, 100.0 * double(stats.vmem_busy) / cu_cycles,
      100.0 * stats.hbm_bytes / hbm_bytes_per_clk_per_cu(cus_busy) / cu_cycles,
      100.0 * double(stats.l2_own_hits) / std::max<double>(double(stats.l2_lines), 1.0), stats.instructions,
      stalls, emulated_seconds);
}

}  // namespace zyfa::emu::timing
