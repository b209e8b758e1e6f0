// The two job-table schedules (host/job_table.h) on the modelled MI355X: predicted times of
// ZYFA's gfx950 attention kernels under kEqualJobs and under kBalancedWork (docs/design.md,
// "Job tables"; docs/timing-model.md). The model keeps the CUs independent and the kernel
// ends with its slowest CU, so a CU's time is the time of its own workgroups run alone. For
// each schedule the CUs with the most work (key tiles plus kTileOverheadBlocks per tile, the
// balanced schedule's own cost; an even spread of them when many tie) are predicted that way:
// their workgroups' jobs are moved to the workgroups of CU 0 in a table of the same grid, and
// CU 0 is simulated. The slowest of them is the kernel's time. The unmodified call is
// predicted as well (CU 0, as zyfa-bench does) as a check of the method.
//
// usage: zyfa-model-schedule bf16|fp8 SEQLEN HEADS [CUS per schedule, default 3]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attn_fwd_args.h"
#include "../zyfa-bench/model.h"
#include "emu/emulator.h"
#include "emu/timing/predict.h"
#include "host/job_table.h"
#include "host/numerics/bf16.h"
#include "host/numerics/e4m3.h"
#include "zyfa/zyfa.h"

namespace {

using zyfa::JobSchedule;
using zyfa::JobTable;

struct Study {
  int64_t seqlen = 0, heads = 0;
  int top = 3;
  bool ok = true;
};

// Work of a table's workgroup in the balanced schedule's units.
uint64_t workgroup_cost(const JobTable& t, uint32_t wg) {
  uint64_t cost = 0;
  for (uint32_t j = t.begin(wg); j < t.end(wg); ++j)
    for (uint32_t tile : {t.tile_a(j), t.tile_b(j)})
      if (tile != zyfa::kNoTile) cost += tile % t.n_tiles() + 1 + zyfa::kTileOverheadBlocks;
  return cost;
}

// The workgroups of each modelled CU, in dispatch order.
std::vector<std::vector<uint32_t>> workgroups_by_cu(uint32_t grid) {
  std::vector<std::vector<uint32_t>> by_cu;
  for (uint32_t w = 0; w < grid; ++w) {
    const size_t cu = static_cast<size_t>(zyfa::emu::timing::cu_of_workgroup(w));
    if (by_cu.size() <= cu) by_cu.resize(cu + 1);
    by_cu[cu].push_back(w);
  }
  return by_cu;
}

// A table of the same grid in which CU 0's k-th workgroup runs the jobs of `from[k]` and every
// other workgroup none.
JobTable on_cu0(const JobTable& t, const std::vector<uint32_t>& cu0, const std::vector<uint32_t>& from) {
  JobTable moved;
  moved.words = {t.grid(), t.n_tiles()};
  std::vector<uint32_t> jobs;
  uint32_t count = 0;
  for (uint32_t w = 0, k = 0; w < t.grid(); ++w) {
    moved.words.push_back(count);
    if (k < cu0.size() && cu0[k] == w) {
      for (uint32_t j = t.begin(from[k]); j < t.end(from[k]); ++j, ++count) {
        jobs.push_back(t.tile_a(j));
        jobs.push_back(t.tile_b(j));
      }
      ++k;
    }
  }
  moved.words.push_back(count);
  moved.words.insert(moved.words.end(), jobs.begin(), jobs.end());
  return moved;
}

// One CU simulated: CU 0 of the dispatch.
zyfa::emu::timing::Prediction predict(const zyfa::emu::Dispatch& d, const zyfa::emu::DispatchOptions& opt) {
  return zyfa::bench::predict_dispatch(d, opt, 1);
}

// Predicts the CUs with the most work under `table` one at a time; returns the slowest in cycles.
uint64_t predict_schedule(const char* name, const JobTable& table, const zyfa::emu::Dispatch& d,
                          const zyfa::emu::DispatchOptions& opt, Study* s) {
  const std::vector<std::vector<uint32_t>> by_cu = workgroups_by_cu(table.grid());
  const auto work = [&](const std::vector<uint32_t>& wgs) {
    uint64_t sum = 0, jobs = 0;
    for (uint32_t w : wgs) {
      sum += workgroup_cost(table, w);
      jobs += table.end(w) - table.begin(w);
    }
    return std::pair{sum, jobs};
  };
  std::vector<size_t> order(by_cu.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return work(by_cu[a]) > work(by_cu[b]); });
  // When more CUs than asked for tie for the most work, an even spread of them (their times
  // still differ with the tiles their workgroups pair up).
  size_t tied = 1;
  while (tied < order.size() && work(by_cu[order[tied]]) == work(by_cu[order[0]])) ++tied;
  std::vector<size_t> chosen;
  for (size_t i = 0; i < static_cast<size_t>(s->top) && i < order.size(); ++i)
    chosen.push_back(tied > static_cast<size_t>(s->top) ? order[i * tied / static_cast<size_t>(s->top)] : order[i]);
  uint64_t slowest = 0;
  for (const size_t cu : chosen) {
    if (by_cu[cu].size() != by_cu[0].size()) continue;  // CU 0 must hold as many workgroups
    JobTable moved = on_cu0(table, by_cu[0], by_cu[cu]);
    zyfa::kernels::AttnFwdArgs args;
    std::memcpy(&args, d.kernarg, sizeof args);
    args.job_table = reinterpret_cast<uint64_t>(moved.words.data());
    zyfa::emu::Dispatch single = d;
    single.kernarg = &args;
    single.kernarg_size = sizeof args;
    single.regions.push_back({args.job_table, moved.bytes(), false, "job table moved to CU 0"});
    const zyfa::emu::timing::Prediction p = predict(single, opt);
    if (!p.ok) {
      std::fprintf(stderr, "%s CU %zu: %s\n", name, cu, p.error.c_str());
      s->ok = false;
      return 0;
    }
    const auto [cost, jobs] = work(by_cu[cu]);
    std::printf("%s CU %zu (%zu workgroups): cost %llu, %llu jobs, %llu cycles\n", name, cu, by_cu[cu].size(),
                static_cast<unsigned long long>(cost), static_cast<unsigned long long>(jobs),
                static_cast<unsigned long long>(p.cycles));
    slowest = std::max(slowest, p.cycles);
  }
  return slowest;
}

zyfa::emu::DispatchResult study_dispatch(const zyfa::emu::Dispatch& d, const zyfa::emu::DispatchOptions& opt,
                                         Study* s) {
  zyfa::emu::DispatchResult r;
  r.ok = true;
  if (d.kernel.rfind("attn_fwd", 0) != 0) return zyfa::emu::run_dispatch(d, opt);
  zyfa::kernels::AttnFwdArgs args;
  std::memcpy(&args, d.kernarg, sizeof args);
  const uint32_t* words = reinterpret_cast<const uint32_t*>(args.job_table);
  JobTable equal;
  const uint32_t grid = words[0];
  equal.words.assign(words, words + 3 + grid + 2 * words[2 + grid]);
  const int64_t tile_rows = (s->seqlen + equal.n_tiles() - 1) / equal.n_tiles();
  zyfa::JobTableParams params{1, s->heads, s->heads, s->seqlen, tile_rows, grid, 8};
  JobTable rebuilt, balanced;
  params.schedule = JobSchedule::kBalancedWork;
  if (!zyfa::build_job_table(params, &balanced)) s->ok = false;
  params.schedule = JobSchedule::kEqualJobs;
  if (!zyfa::build_job_table(params, &rebuilt) || rebuilt.words != equal.words) {
    std::fprintf(stderr, "the call's table is not the equal-jobs table of the assumed parameters\n");
    s->ok = false;
  }
  if (!s->ok) return r;
  std::printf("%s: S %lld, H %lld, tile rows %lld, %u workgroups; jobs: equal %u, balanced %u\n", d.kernel.c_str(),
              static_cast<long long>(s->seqlen), static_cast<long long>(s->heads), static_cast<long long>(tile_rows),
              grid, equal.num_jobs(), balanced.num_jobs());
  const zyfa::emu::timing::Prediction whole = predict(d, opt);
  std::printf("unmodified call, CU 0: %llu cycles (%s)\n", static_cast<unsigned long long>(whole.cycles),
              whole.ok ? "ok" : whole.error.c_str());
  const uint64_t e = predict_schedule("equal", equal, d, opt, s);
  const uint64_t b = predict_schedule("balanced", balanced, d, opt, s);
  std::printf("slowest CU: equal %llu cycles, balanced %llu cycles (balanced / equal = %.4f)\n",
              static_cast<unsigned long long>(e), static_cast<unsigned long long>(b), e ? double(b) / double(e) : 0.0);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || (std::strcmp(argv[1], "bf16") != 0 && std::strcmp(argv[1], "fp8") != 0)) {
    std::fprintf(stderr, "usage: zyfa-model-schedule bf16|fp8 SEQLEN HEADS [CUS per schedule]\n");
    return 2;
  }
  const bool fp8 = std::strcmp(argv[1], "fp8") == 0;
  Study s;
  s.seqlen = std::atoll(argv[2]);
  s.heads = std::atoll(argv[3]);
  if (argc > 4) s.top = std::atoi(argv[4]);
  const int64_t d = 128, n = s.seqlen * s.heads * d;
  // q, k and v Gaussian with std 0.1, as the benchmark protocol (docs/timing-model.md).
  std::mt19937_64 rng(1);
  std::normal_distribution<float> gauss(0.0f, 0.1f);
  std::vector<uint8_t> qkv[3];
  for (auto& t : qkv) {
    t.resize(static_cast<size_t>(n) * (fp8 ? 1 : 2));
    for (int64_t i = 0; i < n; ++i) {
      if (fp8) {
        t[i] = zyfa::numerics::float_to_e4m3(gauss(rng));
      } else {
        const uint16_t b = zyfa::numerics::float_to_bf16(gauss(rng));
        std::memcpy(&t[2 * i], &b, 2);
      }
    }
  }
  std::vector<uint16_t> out(static_cast<size_t>(n));
  const zyfa_dtype_t dt = fp8 ? ZYFA_DTYPE_FP8_E4M3 : ZYFA_DTYPE_BF16;
  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  desc.q = zyfa_tensor_bshd(qkv[0].data(), dt, 1, s.seqlen, s.heads, d);
  desc.k = zyfa_tensor_bshd(qkv[1].data(), dt, 1, s.seqlen, s.heads, d);
  desc.v = zyfa_tensor_bshd(qkv[2].data(), dt, 1, s.seqlen, s.heads, d);
  desc.out = zyfa_tensor_bshd(out.data(), ZYFA_DTYPE_BF16, 1, s.seqlen, s.heads, d);
  desc.backend = ZYFA_BACKEND_EMU;
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return 1;
  zyfa::emu::set_dispatch_hook(
      [&](const zyfa::emu::Dispatch& dd, const zyfa::emu::DispatchOptions& o) { return study_dispatch(dd, o, &s); });
  const zyfa_status_t st = zyfa_fwd(h, &desc);
  zyfa::emu::set_dispatch_hook({});
  zyfa_destroy(h);
  if (st != ZYFA_STATUS_SUCCESS) {
    std::fprintf(stderr, "zyfa_fwd: %s\n", zyfa_last_error());
    return 1;
  }
  return s.ok ? 0 : 1;
}
