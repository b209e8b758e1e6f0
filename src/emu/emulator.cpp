// One dispatch: kernel arguments (explicit + hidden per the code object's metadata), the
// dispatch packet, workgroups in a seeded random order spread over host threads, and the
// first fault by workgroup id (deterministic whatever the thread timing).
#include "emu/emulator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/loader/code_object.h"
#include "emu/timing/cycle_hazards.h"

namespace zyfa::emu {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Hidden arguments the HIP runtime appends after the explicit ones (LLVM AMDGPUUsage, code
// object V5 metadata ".value_kind" hidden_*). Those not listed are zero.
void fill_hidden(const KernelInfo& k, const Dispatch& d, std::vector<uint8_t>& ka) {
  for (const KernelArg& a : k.args) {
    if (a.value_kind.rfind("hidden_", 0) != 0 || a.offset < d.kernarg_size) continue;
    if (a.offset + a.size > ka.size()) continue;
    uint64_t v = 0;
    const std::string& s = a.value_kind;
    if (s == "hidden_block_count_x") v = d.grid[0];
    else if (s == "hidden_block_count_y") v = d.grid[1];
    else if (s == "hidden_block_count_z") v = d.grid[2];
    else if (s == "hidden_group_size_x") v = d.block[0];
    else if (s == "hidden_group_size_y") v = d.block[1];
    else if (s == "hidden_group_size_z") v = d.block[2];
    else if (s == "hidden_grid_dims") v = d.grid[2] > 1 ? 3 : d.grid[1] > 1 ? 2 : 1;
    std::memcpy(ka.data() + a.offset, &v, std::min<uint32_t>(a.size, 8));
  }
}

// The warnings of every workgroup, one per (pc, rule): fewest wait states given, total count.
// The private segment setups gfx950 defines (architected flat scratch, LLVM AMDGPUUsage:
// the private segment buffer and flat scratch init user SGPRs "must be 0"; ENABLE_PRIVATE_SEGMENT
// turns scratch on and sets FLAT_SCRATCH); anything else is refused with the field named.
std::string private_segment_refusal(const KernelDescriptor& kd) {
  if (kd.user_private_segment_buffer())
    return "ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER is set, which gfx950 (architected flat scratch) does not support";
  if (kd.user_flat_scratch_init())
    return "ENABLE_SGPR_FLAT_SCRATCH_INIT is set, which gfx950 (architected flat scratch) does not support";
  if (kd.kernel_code_properties & (1u << 11))
    return "USES_DYNAMIC_STACK is set: the private segment size is not known from the descriptor, which the "
           "emulator does not model";
  if (kd.private_segment_fixed_size != 0 && !kd.enable_private_segment())
    return fmt::format("PRIVATE_SEGMENT_FIXED_SIZE is {} bytes but ENABLE_PRIVATE_SEGMENT is 0 (no scratch without it)",
                       kd.private_segment_fixed_size);
  // An emulator limit, not a hardware one: 64 lanes of it per wave live in host memory, for
  // every wave of every workgroup running at once (2 MiB per wave at the limit).
  if (kd.private_segment_fixed_size > (32u << 10))
    return fmt::format("PRIVATE_SEGMENT_FIXED_SIZE is {} bytes, more than the 32 KiB per work-item the emulator allocates",
                       kd.private_segment_fixed_size);
  return {};
}

void merge_warnings(std::vector<RuleWarning> from, std::map<std::pair<uint32_t, std::string>, RuleWarning>& into) {
  for (RuleWarning& w : from) {
    RuleWarning& m = into[{w.pc, w.rule}];
    if (m.count == 0) {
      m = std::move(w);
      continue;
    }
    m.given = std::min(m.given, w.given);
    m.slack_cycles = std::min(m.slack_cycles, w.slack_cycles);
    m.count += w.count;
  }
}

std::mutex g_hook_mu;
DispatchHook g_hook;

}  // namespace

void set_dispatch_hook(DispatchHook hook) {
  std::lock_guard<std::mutex> lock(g_hook_mu);
  g_hook = std::move(hook);
}

bool parse_rule_set(std::string_view name, RuleSet* out) {
  if (name == "strict") *out = RuleSet::kStrict;
  else if (name == "hardware") *out = RuleSet::kHardware;
  else return false;
  return true;
}

const char* rule_set_name(RuleSet rules) {
  switch (rules) {
    case RuleSet::kStrict: return "strict";
    case RuleSet::kHardware: return "hardware";
    default: return "default";
  }
}

DispatchResult run_dispatch(const Dispatch& d, const DispatchOptions& opt) {
  if (!opt.timing) {
    DispatchHook hook;
    {
      std::lock_guard<std::mutex> lock(g_hook_mu);
      hook = g_hook;
    }
    if (hook) return hook(d, opt);
  }
  DispatchResult result;
  const auto t0 = std::chrono::steady_clock::now();
  auto fail = [&](std::string msg) {
    result.ok = false;
    result.error = std::move(msg);
    return result;
  };
  result.rules = opt.rules;
  if (result.rules == RuleSet::kDefault) {
    const char* env = std::getenv("ZYFA_EMU_RULES");
    result.rules = RuleSet::kStrict;
    if (env && *env && !parse_rule_set(env, &result.rules))
      return fail(fmt::format("ZYFA_EMU_RULES = '{}': expected 'strict' or 'hardware'", env));
  }
  if (!d.object) return fail("no code object");
  const KernelInfo* k = d.object->find_kernel(d.kernel);
  if (!k) return fail(fmt::format("kernel '{}' is not in the code object", d.kernel));
  const KernelDescriptor& kd = k->kd;
  if (kd.wave32() || k->wavefront_size != 64) return fail(fmt::format("kernel {}: wave32 is not gfx950 compute", k->name));
  if (std::string why = private_segment_refusal(kd); !why.empty()) return fail(fmt::format("kernel {}: {}", k->name, why));
  for (int i = 0; i < 3; ++i)
    if (d.grid[i] == 0 || d.block[i] == 0) return fail(fmt::format("kernel {}: empty grid or block", k->name));
  const uint64_t threads = uint64_t(d.block[0]) * d.block[1] * d.block[2];
  if (threads > 1024) return fail(fmt::format("kernel {}: {} work-items per workgroup (max 1024)", k->name, threads));
  const uint64_t lds = uint64_t(kd.group_segment_fixed_size) + d.dynamic_lds_bytes;
  if (lds > kMaxLdsBytes) return fail(fmt::format("kernel {}: {} bytes of LDS exceed the 160 KiB of a CU", k->name, lds));

  // Kernel arguments: the caller's bytes, then hidden arguments, in a read-only region.
  const size_t ka_size = std::max<size_t>({size_t(kd.kernarg_size), size_t(k->kernarg_segment_size), d.kernarg_size});
  std::vector<uint8_t> kernarg((ka_size + 63) & ~size_t(63), 0);
  if (d.kernarg_size) std::memcpy(kernarg.data(), d.kernarg, d.kernarg_size);
  fill_hidden(*k, d, kernarg);

  // hsa_kernel_dispatch_packet_t (64 bytes): workgroup and grid sizes for kernels that read them.
  alignas(64) uint8_t packet[64] = {};
  auto put16 = [&](int off, uint16_t v) { std::memcpy(packet + off, &v, 2); };
  auto put32 = [&](int off, uint32_t v) { std::memcpy(packet + off, &v, 4); };
  auto put64 = [&](int off, uint64_t v) { std::memcpy(packet + off, &v, 8); };
  put16(2, uint16_t(d.grid[2] > 1 ? 3 : d.grid[1] > 1 ? 2 : 1));
  put16(4, uint16_t(d.block[0]));
  put16(6, uint16_t(d.block[1]));
  put16(8, uint16_t(d.block[2]));
  for (int i = 0; i < 3; ++i) put32(12 + 4 * i, d.grid[i] * d.block[i]);
  put32(28, uint32_t(lds));
  put32(24, kd.enable_private_segment() ? (kd.private_segment_fixed_size + 3) & ~3u : 0);  // private_segment_size
  put64(40, reinterpret_cast<uint64_t>(kernarg.data()));

  DispatchContext ctx;
  ctx.object = d.object;
  ctx.kernel = k;
  ctx.regions = d.regions;
  ctx.regions.push_back({reinterpret_cast<uint64_t>(kernarg.data()), kernarg.size(), false, "kernel arguments"});
  ctx.regions.push_back({reinterpret_cast<uint64_t>(packet), sizeof(packet), false, "dispatch packet"});
  ctx.regions.push_back({reinterpret_cast<uint64_t>(d.object->image().data()), d.object->image().size(), false,
                         "code object"});
  std::sort(ctx.regions.begin(), ctx.regions.end(), [](const MemoryRegion& a, const MemoryRegion& b) { return a.base < b.base; });
  for (int i = 0; i < 3; ++i) { ctx.grid[i] = d.grid[i]; ctx.block[i] = d.block[i]; }
  ctx.lds_bytes = uint32_t(lds);
  ctx.kernarg_address = reinterpret_cast<uint64_t>(kernarg.data());
  ctx.dispatch_ptr = reinterpret_cast<uint64_t>(packet);
  ctx.seed = opt.seed;
  ctx.max_instructions_per_wave = opt.max_instructions_per_wave;
  ctx.rules = result.rules;
  ctx.trace = opt.trace;
  ctx.order_checks = opt.order_checks;

  // Workgroups in a random order (seeded), handed out to threads one at a time.
  const uint64_t total = uint64_t(d.grid[0]) * d.grid[1] * d.grid[2];
  std::vector<uint64_t> order;
  if (opt.only_workgroups.empty()) {
    order.resize(total);
    for (uint64_t i = 0; i < total; ++i) order[i] = i;
  } else {
    for (uint64_t id : opt.only_workgroups)
      if (id >= total) return fail(fmt::format("kernel {}: workgroup {} is outside the grid of {}", k->name, id, total));
    order = opt.only_workgroups;
  }
  const uint64_t n = order.size();
  Rng shuffle(mix(opt.seed));
  for (uint64_t i = n; i > 1; --i) std::swap(order[i - 1], order[shuffle.next() % i]);

  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> first_fault_id{UINT64_MAX};
  std::mutex mu;
  std::string first_fault;
  std::map<std::pair<uint32_t, std::string>, RuleWarning> warnings;
  std::atomic<uint64_t> waves{0}, instructions{0}, lane_instructions{0};
  std::atomic<uint32_t> scratch_used{0};
  // Under hardware the MFMA rules are decided in elapsed cycles after the run (cycle_hazards.h):
  // every workgroup records its issue trace (8 bytes per instruction) for the replay.
  const bool cycle_rules = result.rules == RuleSet::kHardware;
  std::map<uint64_t, std::vector<CycleClaim>> claims;
  std::vector<WorkgroupTrace> own_traces;
  const size_t caller_traces = opt.timing ? opt.timing->size() : 0;

  auto worker = [&] {
    for (;;) {
      const uint64_t i = next.fetch_add(1);
      if (i >= n) return;
      const uint64_t id = order[i];
      if (id > first_fault_id.load()) continue;  // a lower workgroup already failed
      Workgroup wg;
      wg.linear_id = id;
      wg.id[0] = uint32_t(id % d.grid[0]);
      wg.id[1] = uint32_t((id / d.grid[0]) % d.grid[1]);
      wg.id[2] = uint32_t(id / (uint64_t(d.grid[0]) * d.grid[1]));
      wg.rng = Rng(mix(opt.seed ^ mix(id + 1)));
      WorkgroupTrace trace;
      trace.linear_id = id;
      if (opt.timing || cycle_rules) wg.trace = &trace;
      Executor ex(ctx, wg);
      try {
        ex.run();
      } catch (const KernelFault& f) {
        std::lock_guard<std::mutex> lock(mu);
        if (id < first_fault_id.load()) {
          first_fault_id.store(id);
          first_fault = f.what();
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (id < first_fault_id.load()) {
          first_fault_id.store(id);
          first_fault = fmt::format("kernel {}: emulator error: {}", k->name, e.what());
        }
      }
      if (std::vector<RuleWarning> w = ex.take_warnings(); !w.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        merge_warnings(std::move(w), warnings);
      }
      uint64_t ins = 0, lanes = 0;
      uint32_t used = 0;
      for (const auto& w : wg.waves) {
        ins += w->instructions;
        lanes += w->lane_instructions;
        used = std::max(used, w->scratch_used);
      }
      for (uint32_t seen = scratch_used.load(); used > seen && !scratch_used.compare_exchange_weak(seen, used);) {}
      if (std::vector<CycleClaim> c = ex.take_claims(); !c.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        claims[id] = std::move(c);
      }
      if (opt.timing || cycle_rules) {
        std::lock_guard<std::mutex> lock(mu);
        (opt.timing ? *opt.timing : own_traces).push_back(std::move(trace));
      }
      waves += wg.waves.size();
      instructions += ins;
      lane_instructions += lanes;
    }
  };
  unsigned nthreads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  nthreads = unsigned(std::min<uint64_t>(nthreads, n));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < nthreads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  result.stats.workgroups = n;  // those that ran
  result.stats.waves = waves;
  result.stats.instructions = instructions;
  result.stats.lane_instructions = lane_instructions;
  result.stats.scratch_lane_bytes = kd.enable_private_segment() ? (kd.private_segment_fixed_size + 3) & ~3u : 0;
  result.stats.scratch_used_bytes = scratch_used;
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The claims are decided only when no workgroup faulted: after a fault the workgroups above
  // it may not have run, and the dispatch fails anyway.
  if (first_fault_id.load() == UINT64_MAX && !claims.empty()) {
    const std::vector<WorkgroupTrace>& all = opt.timing ? *opt.timing : own_traces;
    std::vector<const WorkgroupTrace*> traces;
    for (size_t i = opt.timing ? caller_traces : 0; i < all.size(); ++i) traces.push_back(&all[i]);
    timing::CycleVerdicts v = timing::decide_cycle_claims(*d.object, *k, uint32_t(lds), traces, claims);
    merge_warnings(std::move(v.warnings), warnings);
    if (v.faulted) {  // the dispatch's result is the verdict
      first_fault_id.store(0);
      first_fault = std::move(v.fault);
    }
  }
  for (auto& [key, w] : warnings) {
    if (w.lds_order) {
      w.text = fmt::format("hardware rules: {} at pc 0x{:x} '{}': LDS bytes another wave touches with no s_barrier "
                           "between, ordered only by timing ({}); {} time(s), least margin {} cycle(s) beyond the {} "
                           "required", w.rule, w.pc, w.instruction, w.source, w.count, w.slack_cycles,
                           timing::kLdsOrderMarginCycles);
      result.warnings.push_back(std::move(w));
      continue;
    }
    w.text = fmt::format("hardware rules: {} at pc 0x{:x} '{}': {} wait state(s) given, LLVM asks for {} ({}); "
                         "{} time(s)", w.rule, w.pc, w.instruction, w.given, w.required, w.source, w.count);
    if (w.slack_cycles >= 0)
      w.text += fmt::format("; covered by the other waves of its SIMD on the MI355X model, least slack {} cycle(s)",
                            w.slack_cycles);
    result.warnings.push_back(std::move(w));
  }
  if (first_fault_id.load() != UINT64_MAX) return fail(first_fault);
  result.ok = true;
  return result;
}

}  // namespace zyfa::emu
