// zyfa-aiter-race-order: in which order the MI355X timing model puts the cross-wave LDS
// accesses at which AITER's kernels stop under the emulator's race checks (docs/emulator.md,
// "AMD's AITER kernels"), and by how many cycles. The kernels run with the order checks off
// (DispatchOptions::order_checks), their traces are replayed on the CU model, and the model's
// clocks of the two accesses of each race are compared (the program counters are those of the
// pinned wheel, amd-aiter 0.1.7.post2.dev18). A diagnostic, not a test: it prints cycles.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "aiter_fmha_v3.h"
#include "aiter_inputs.h"
#include "emu/loader/code_object.h"
#include "emu/timing/cu_model.h"

namespace zyfa::test {
namespace {

// When an instruction touched LDS in the replay (IssueObserver's memory clocks).
struct Access {
  uint32_t pc;
  uint64_t issue, begin, end;
};

struct Recorder : emu::timing::IssueObserver {
  const emu::WorkgroupTrace* trace = nullptr;
  const emu::LoadedCodeObject* object = nullptr;
  std::map<uint32_t, std::vector<Access>> waves;  // LDS accesses (DS, loads to LDS) per wave
  void issued(size_t wg, uint32_t wave, size_t index, uint64_t clock, uint64_t begin, uint64_t end) override {
    if (wg != 0) return;
    const uint32_t pc = trace->waves[wave][index].pc;
    const emu::Instruction* in = object->at(pc);
    if (in && (in->enc == emu::Encoding::kDs || in->lds)) waves[wave].push_back({pc, clock, begin, end});
  }
};

// Runs the first workgroup of AITER's causal kernel (d_qk, one head, seqlen s) and replays it.
bool replay(int d, int s, Recorder& rec, std::vector<uint8_t>& image, emu::WorkgroupTrace& trace) {
  const aiter::KernelChoice kernel{d, true};
  const std::string dir = aiter::cache_dir();
  std::string error;
  image = aiter::read_code_object(dir, kernel, &error);
  if (image.empty()) {
    std::printf("d %d: %s (bench/aiter/fetch-aiter-kernels.sh fetches the kernels)\n", d, error.c_str());
    return false;
  }
  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_BF16, uint32_t(d), 1, 1, uint32_t(s));
  cfg.seed = 1;
  AttnData data = make_attn_data(cfg);
  AiterInputs in = aiter_inputs(cfg, data, kernel);
  emu::DispatchOptions opt;
  opt.seed = 1;
  opt.rules = emu::RuleSet::kHardware;
  opt.order_checks = false;
  opt.only_workgroups = {0};
  std::vector<emu::WorkgroupTrace> traces;
  opt.timing = &traces;
  const emu::DispatchResult r = aiter::run(dir, kernel, in.problem, opt);
  // A run that stops later (d 192) still leaves the trace up to the stop.
  if (!r.ok) std::printf("d %d S %d: the run stopped (the trace up to there is replayed): %s\n", d, s, r.error.c_str());
  if (traces.empty()) return false;
  trace = std::move(traces[0]);
  const emu::LoadedCodeObject object(image.data(), image.size());
  const emu::KernelInfo* info = object.find_kernel(kernel.symbol());
  rec.trace = &trace;
  rec.object = &object;
  emu::timing::simulate_cu(object, *info, info->kd.group_segment_fixed_size, {&trace}, &rec);
  rec.object = nullptr;
  return true;
}

bool in(uint32_t pc, uint32_t lo, uint32_t hi) { return pc >= lo && pc <= hi; }

// d 128, S 300: the look-ahead V loads to LDS of the last key iteration (pc 0x5014, 0x5024)
// are in flight at the barrier; after it the next Q tile is loaded to LDS (pc 0x3764) into
// bytes they write. Safe if every such prefetch's LDS write comes before every later Q write.
void d128_s300() {
  Recorder rec;
  std::vector<uint8_t> image;
  emu::WorkgroupTrace trace;
  if (!replay(128, 300, rec, image, trace)) return;
  // The second Q tile's loads (the second 0x3764 of each wave), and the prefetches issued
  // before the first of them (those of the last key iteration).
  uint64_t q_issue = UINT64_MAX, first_q = UINT64_MAX, last_prefetch = 0;
  for (auto& [w, acc] : rec.waves) {
    int seen = 0;
    for (const Access& a : acc)
      if (a.pc == 0x3764 && ++seen == 2) {
        q_issue = std::min(q_issue, a.issue);
        first_q = std::min(first_q, a.begin);
      }
  }
  for (auto& [w, acc] : rec.waves)
    for (const Access& a : acc)
      if ((a.pc == 0x5014 || a.pc == 0x5024) && a.issue < q_issue) last_prefetch = std::max(last_prefetch, a.begin);
  if (first_q == UINT64_MAX) return;
  std::printf("d 128 S 300 (write after write): the last prefetch to LDS lands at clock %llu, the first write of the "
              "next Q tile at %llu: ordered by %lld cycles on the model\n",
              (unsigned long long)last_prefetch, (unsigned long long)first_q,
              (long long)first_q - (long long)last_prefetch);
}

// d 192, S 256: after the barrier every wave reads its tile from LDS (pc 0x3D40-0x3DF8), then
// loads the next tile to LDS (pc 0x3E10-0x3EF8) into bytes other waves read. Safe if, in each
// barrier interval, every read is served before any of those loads writes LDS.
void d192_s256() {
  Recorder rec;
  std::vector<uint8_t> image;
  emu::WorkgroupTrace trace;
  if (!replay(192, 256, rec, image, trace)) return;
  // Per round k (the k-th read block of each wave): the last read served and the first
  // load's LDS write.
  std::vector<uint64_t> last_read, first_write;
  for (auto& [w, acc] : rec.waves) {
    int round = -1;
    bool reading = false;
    for (const Access& a : acc) {
      const bool read = in(a.pc, 0x3D40, 0x3DF8);
      if (read && !reading) ++round;
      reading = read;
      if (round < 0) continue;
      if (last_read.size() <= size_t(round)) {
        last_read.resize(size_t(round) + 1, 0);
        first_write.resize(size_t(round) + 1, UINT64_MAX);
      }
      if (read) last_read[size_t(round)] = std::max(last_read[size_t(round)], a.end);
      else if (in(a.pc, 0x3E10, 0x3EF8)) first_write[size_t(round)] = std::min(first_write[size_t(round)], a.begin);
    }
  }
  for (size_t k = 0; k < last_read.size(); ++k)
    if (first_write[k] != UINT64_MAX)
      std::printf("d 192 S 256 (write after read), round %zu: the last read is served at clock %llu, the first load "
                  "to LDS writes at %llu: ordered by %lld cycles on the model\n",
                  k, (unsigned long long)last_read[k], (unsigned long long)first_write[k],
                  (long long)first_write[k] - (long long)last_read[k]);
}

}  // namespace
}  // namespace zyfa::test

int main() {
  zyfa::test::d128_s300();
  zyfa::test::d192_s256();
  return 0;
}
