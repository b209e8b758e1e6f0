// Workgroup execution: wave scheduling (random interleaving), barriers, operand access,
// the in-flight memory model (s_waitcnt) and fault reporting.
//
// s_waitcnt semantics: AMD CDNA4 ISA, "Data Dependency Resolution" / S_WAITCNT: vector memory
// operations (loads and stores) return in issue order and decrement VM_CNT; LDS operations
// return in order and SMEM operations in any order, both counted by LGKM_CNT. A register a
// load writes may only be read after a wait that guarantees its completion.
#include "emu/core/executor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "emu/core/bits.h"
#include "emu/core/buffer_address.h"
#include "emu/isa/isa_ops.h"
#include "emu/timing/memory_cost.h"

namespace zyfa::emu {

namespace {
constexpr uint32_t kMaxVmcnt = 63, kMaxLgkmcnt = 15;

std::string reg_name(uint32_t reg) {
  if (reg >= kSgprBase) return fmt::format("s{}", reg - kSgprBase);
  if (reg >= kAgprBase) return fmt::format("a{}", reg - kAgprBase);
  return fmt::format("v{}", reg);
}
}  // namespace

std::string Executor::fault_location() const {
  std::ostringstream os;
  if (in_) {
    os << " [at pc 0x" << std::hex << in_->pc << std::dec << " '" << in_->name << "'";
  } else {
    os << " [";
  }
  if (w_) {
    os << ", workgroup (" << wg_.id[0] << "," << wg_.id[1] << "," << wg_.id[2] << ") wave "
       << w_->id_in_group;
  }
  os << "]";
  return os.str();
}

void Executor::fault(const std::string& what) const {
  throw KernelFault("kernel " + ctx_.kernel->name + ": " + what + fault_location());
}

// ---------------------------------------------------------------- scalar operands

uint32_t Executor::sread(uint16_t code) {
  Wave& w = *w_;
  if (code < 128) {
    if (code < 102 && code >= w.num_sgprs)
      fault(fmt::format("reads s{} beyond the {} SGPRs the kernel descriptor allocates", code, w.num_sgprs));
    if (w.pending_total && w.pending_write[kSgprBase + code]) check_pending(kSgprBase + code, "read");
    if (code == operand::kM0 || code < 108 || code == operand::kExecLo || code == operand::kExecHi)
      return w.s[code];
    fault(fmt::format("reads unsupported special SGPR operand {}", code));
  }
  if (code <= 192) return code - 128;
  if (code <= 208) return static_cast<uint32_t>(-(int32_t(code) - 192));
  switch (code) {
    case 240: return 0x3F000000u;  // 0.5
    case 241: return 0xBF000000u;
    case 242: return 0x3F800000u;  // 1.0
    case 243: return 0xBF800000u;
    case 244: return 0x40000000u;  // 2.0
    case 245: return 0xC0000000u;
    case 246: return 0x40800000u;  // 4.0
    case 247: return 0xC0800000u;
    case 248: return 0x3E22F983u;  // 1/(2*pi)
    case operand::kVccz: return w.vcc() == 0;
    case operand::kExecz: return w.exec() == 0;
    case operand::kScc: return w.scc;
    case operand::kLiteral:
      if (!in_->has_literal) fault("literal operand without a literal");
      return in_->literal;
    default: fault(fmt::format("unsupported scalar operand code {}", code));
  }
}

uint64_t Executor::sread64(uint16_t code, bool f64) {
  if (code < 128) return uint64_t(sread(code)) | (uint64_t(sread(code + 1)) << 32);
  // src_shared_base / src_private_base: the flat aperture bases (buffer_address.h).
  if (code == 235) return uint64_t(kSharedApertureHi) << 32;
  if (code == 237) return uint64_t(kPrivateApertureHi) << 32;
  if (code <= 208) return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(sread(code))));
  if (code >= 240 && code <= 248) {
    static const uint64_t f64_consts[] = {0x3FE0000000000000ull, 0xBFE0000000000000ull, 0x3FF0000000000000ull,
                                          0xBFF0000000000000ull, 0x4000000000000000ull, 0xC000000000000000ull,
                                          0x4010000000000000ull, 0xC010000000000000ull, 0x3FC45F306DC9C882ull};
    return f64_consts[code - 240];
  }
  if (code == operand::kLiteral) return f64 ? uint64_t(sread(code)) << 32 : uint64_t(sread(code));
  return sread(code);
}

void Executor::swrite(uint16_t code, uint32_t value) {
  Wave& w = *w_;
  if (code < 102) {
    if (code >= w.num_sgprs)
      fault(fmt::format("writes s{} beyond the {} SGPRs the kernel descriptor allocates", code, w.num_sgprs));
  } else if (!(code == operand::kVccLo || code == operand::kVccHi || code == operand::kM0 ||
               code == operand::kExecLo || code == operand::kExecHi)) {
    fault(fmt::format("writes unsupported special SGPR operand {}", code));
  }
  if (w.pending_total && w.pending_write[kSgprBase + code]) check_pending(kSgprBase + code, "overwrite");
  w.s[code] = value;
}

void Executor::swrite64(uint16_t code, uint64_t value) {
  swrite(code, uint32_t(value));
  swrite(code + 1, uint32_t(value >> 32));
}

// ---------------------------------------------------------------- vector operands

const uint32_t* Executor::vreg_read(uint32_t vgpr) {
  Wave& w = *w_;
  if (vgpr >= w.num_vgprs)
    fault(fmt::format("reads v{} beyond the {} VGPRs the kernel descriptor allocates", vgpr, w.num_vgprs));
  if (w.pending_total) check_pending(vgpr, "read");
  return w.vreg(vgpr);
}

const uint32_t* Executor::areg_read(uint32_t agpr) {
  Wave& w = *w_;
  if (agpr >= w.num_agprs)
    fault(fmt::format("reads a{} beyond the {} AGPRs the kernel descriptor allocates", agpr, w.num_agprs));
  if (w.pending_total) check_pending(kAgprBase + agpr, "read");
  return w.areg(agpr);
}

uint32_t* Executor::vdst(uint32_t vgpr) {
  Wave& w = *w_;
  if (vgpr >= w.num_vgprs)
    fault(fmt::format("writes v{} beyond the {} VGPRs the kernel descriptor allocates", vgpr, w.num_vgprs));
  if (w.pending_total) check_pending(vgpr, "overwrite");
  return w.vreg(vgpr);
}

uint32_t* Executor::adst(uint32_t agpr) {
  Wave& w = *w_;
  if (agpr >= w.num_agprs)
    fault(fmt::format("writes a{} beyond the {} AGPRs the kernel descriptor allocates", agpr, w.num_agprs));
  if (w.pending_total) check_pending(kAgprBase + agpr, "overwrite");
  return w.areg(agpr);
}

const uint32_t* Executor::vsrc(uint16_t code, uint32_t* tmp, OpType t) {
  if (code >= operand::kVgpr0) {
    const uint32_t r = code - operand::kVgpr0;
    hazard_check_read_vgpr(r, false, false);
    return vreg_read(r);
  }
  if (code < 128) hazard_check_valu_sgpr_read(code);
  uint32_t value;
  if (t == OpType::kF16 && code >= 240 && code <= 248) {
    static const uint16_t f16_consts[] = {0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118};
    value = f16_consts[code - 240];
  } else {
    value = sread(code);
  }
  std::fill(tmp, tmp + kLanes, value);
  return tmp;
}

void Executor::vsrc64(uint16_t code, uint64_t* out, OpType t) {
  if (code >= operand::kVgpr0) {
    const uint32_t r = code - operand::kVgpr0;
    hazard_check_read_vgpr(r, false, false);
    hazard_check_read_vgpr(r + 1, false, false);
    const uint32_t* lo = vreg_read(r);
    const uint32_t* hi = vreg_read(r + 1);
    for (int l = 0; l < kLanes; ++l) out[l] = uint64_t(lo[l]) | (uint64_t(hi[l]) << 32);
    return;
  }
  if (code < 128) hazard_check_valu_sgpr_read(code, 2);
  const uint64_t v = sread64(code, t == OpType::kF64);
  std::fill(out, out + kLanes, v);
}

// ---------------------------------------------------------------- scoreboard

void Executor::check_pending(uint32_t reg, const char* role) {
  Wave& w = *w_;
  const uint32_t s = w.slot(reg);
  if (!w.pending_write[s]) return;
  fault(fmt::format("{} of {} while the memory load issued at pc 0x{:x} that writes it is still in flight "
                    "(missing or too weak s_waitcnt)",
                    role, reg_name(reg), w.pending_pc[s]));
}

void Executor::mark_pending(PendingOp* op, uint32_t reg) {
  Wave& w = *w_;
  const uint32_t s = w.slot(reg);
  if (w.pending_write[s]) check_pending(reg, "second in-flight load into");
  if (op->nmarked >= op->marked.size()) fault("internal: too many destination registers");
  op->marked[op->nmarked++] = static_cast<uint16_t>(reg);
  w.pending_write[s] = 1;
  w.pending_pc[s] = op->pc;
  ++w.pending_total;
}

void Executor::clear_pending(uint32_t reg) {
  Wave& w = *w_;
  const uint32_t s = w.slot(reg);
  if (w.pending_write[s]) {
    w.pending_write[s] = 0;
    --w.pending_total;
  }
}

void Executor::check_reg_range(uint32_t first, uint32_t count, const char* role) {
  Wave& w = *w_;
  const bool agpr = first >= kAgprBase;
  const uint32_t index = first - (agpr ? kAgprBase : 0);
  const uint32_t limit = agpr ? w.num_agprs : w.num_vgprs;
  if (first >= kSgprBase || index + count > limit)
    fault(fmt::format("{} {}{}..{}{} beyond the {} {} the kernel descriptor allocates", role, agpr ? "a" : "v",
                      index, agpr ? "a" : "v", index + count - 1, limit, agpr ? "AGPRs" : "VGPRs"));
}

PendingOp* Executor::new_op(PendingOp::Kind kind, Counter counter) {
  Wave& w = *w_;
  if (w.free_ops.empty()) {
    w.op_storage.push_back(std::make_unique<PendingOp>());
    w.free_ops.push_back(w.op_storage.back().get());
  }
  PendingOp* op = w.free_ops.back();
  w.free_ops.pop_back();
  op->kind = kind;
  op->counter = counter;
  op->dwords = 1;
  op->elem_bytes = 4;
  op->sign_extend = false;
  op->d16 = -1;
  op->dst_reg = 0;
  op->op = in_->op;
  op->exec = w.exec();
  op->seq = w.next_seq++;
  op->issue_clock = w.clock;
  op->issue_tick = w.ticks;
  op->pc = in_->pc;
  op->lds_base = 0;
  op->landed = false;
  op->lds_box_known = false;
  op->lds_run = 0;
  op->lds_aligned = false;
  op->land_at_issue = false;
  op->nmarked = 0;
  return op;
}

void Executor::issue(PendingOp* op) {
  Wave& w = *w_;
  hazard_check_load_destinations(*op);
  if (ctx_.order_checks) check_memory_order(*op);
  if (op->kind == PendingOp::kGlobalLoadToLds) ++w.lds_dma_in_flight;
  if (w.timing) {
    // Lines are counted from the start of the buffer, which a device allocation aligns (host
    // buffers of the emu backend need not be).
    uint64_t origin = 0;
    for (int l = 0; l < kLanes && op->counter == Counter::kVm; ++l)
      if ((op->exec >> l) & 1) {
        if (const MemoryRegion* r = region_for(op->addr[l * 4], 1, false)) origin = r->base;
        break;
      }
    timing::record_memory_cost(*op, origin, &w.timing->back(), w.timing->size() - 1,
                               &wg_.trace->lines[w.id_in_group]);
  }
  // A full counter stalls issue until the oldest operation returns.
  if (op->counter == Counter::kVm) {
    if (w.vm_queue.size() >= kMaxVmcnt) retire_oldest(Counter::kVm);
    w.vm_queue.push_back(op);
  } else {
    if (w.lds_queue.size() + w.smem_set.size() >= kMaxLgkmcnt)
      retire_oldest(w.lds_queue.empty() ? Counter::kLgkmSmem : Counter::kLgkmLds);
    if (op->counter == Counter::kLgkmLds) w.lds_queue.push_back(op);
    else w.smem_set.push_back(op);
  }
  if (op->land_at_issue) land(op);  // ordered before another wave's load to LDS (lds_dma_order.cpp)
}

void Executor::land(PendingOp* op) {
  if (op->landed) return;
  switch (op->kind) {
    case PendingOp::kLdsLoad:
    case PendingOp::kLdsStore:
    case PendingOp::kLdsAtomic:
      complete_lds_op(*this, *op);
      break;
    default:
      complete_global_op(*this, *op);
      break;
  }
  op->landed = true;
  if (ctx_.trace.enabled && ctx_.trace.out && wg_.linear_id == ctx_.trace.workgroup &&
      w_->id_in_group == ctx_.trace.wave)
    *ctx_.trace.out << fmt::format("    (memory operation of pc 0x{:05x} landed)\n", op->pc);
}

void Executor::retire(PendingOp* op) {
  land(op);
  if (op->kind == PendingOp::kGlobalLoadToLds) --w_->lds_dma_in_flight;
  for (int i = 0; i < op->nmarked; ++i) clear_pending(op->marked[i]);
  op->nmarked = 0;
  if (op->pinned) op->released = true;  // listed as unfenced: freed at the next barrier
  else w_->free_ops.push_back(op);
}

void Executor::land_oldest(Counter c) {
  Wave& w = *w_;
  if (c == Counter::kLgkmSmem) {
    // SMEM returns out of order: any outstanding one may be next.
    std::vector<PendingOp*> open;
    for (PendingOp* op : w.smem_set) if (!op->landed) open.push_back(op);
    if (!open.empty()) land(open[rng().below(static_cast<uint32_t>(open.size()))]);
    return;
  }
  // Under the hardware rules a load to LDS lands only when its wave's s_waitcnt needs it
  // (lds_dma_order.cpp): the latest its data can come, which the timing replay then checks.
  const bool hold_dma = c == Counter::kVm && ctx_.rules == RuleSet::kHardware;
  for (PendingOp* op : c == Counter::kVm ? w.vm_queue : w.lds_queue) {
    if (hold_dma && op->kind == PendingOp::kGlobalLoadToLds) continue;
    if (!op->landed) {
      land(op);
      return;
    }
  }
}

void Executor::retire_oldest(Counter c) {
  Wave& w = *w_;
  if (c == Counter::kVm) {
    PendingOp* op = w.vm_queue.front();
    w.vm_queue.erase(w.vm_queue.begin());
    retire(op);
  } else if (c == Counter::kLgkmLds) {
    PendingOp* op = w.lds_queue.front();
    w.lds_queue.erase(w.lds_queue.begin());
    retire(op);
  } else {
    const size_t i = rng().below(static_cast<uint32_t>(w.smem_set.size()));
    PendingOp* op = w.smem_set[i];
    w.smem_set.erase(w.smem_set.begin() + i);
    retire(op);
  }
}

void Executor::wait_counts(uint32_t vmcnt, uint32_t lgkmcnt) {
  Wave& w = *w_;
  while (w.vm_queue.size() > vmcnt) retire_oldest(Counter::kVm);
  // LGKM counts LDS (returning in order) and SMEM (in any order) together. Once the count is
  // down to N, only what holds for every allowed return order is guaranteed: the LDS
  // operations older than the N youngest (all N still counted may be LDS ones), and the SMEM
  // loads only for N = 0 (any one of them may be among the N still counted). The rest stays
  // in flight, so a use that a non-zero lgkmcnt does not cover faults for every seed.
  while (w.lds_queue.size() > lgkmcnt) retire_oldest(Counter::kLgkmLds);
  if (lgkmcnt == 0)
    while (!w.smem_set.empty()) retire_oldest(Counter::kLgkmSmem);
}

void Executor::drain_all() {
  Wave& w = *w_;
  while (!w.vm_queue.empty()) retire_oldest(Counter::kVm);
  while (!w.lds_queue.empty()) retire_oldest(Counter::kLgkmLds);
  while (!w.smem_set.empty()) retire_oldest(Counter::kLgkmSmem);
}

void Executor::maybe_complete_random() {
  Wave& w = *w_;
  // Each class lands its oldest outstanding operation with a small probability per issued
  // instruction (vector memory 1/16, LDS and scalar memory 1/8: latencies of a few to tens of
  // instructions, as on the hardware): data arrives at random points, never later than the
  // wait that needs it, and stays invisible to other waves long enough for a missing
  // wait or barrier to show.
  if (!w.vm_queue.empty() && (rng().next() & 15) == 0) land_oldest(Counter::kVm);
  if (!w.lds_queue.empty() && (rng().next() & 7) == 0) land_oldest(Counter::kLgkmLds);
  if (!w.smem_set.empty() && (rng().next() & 7) == 0) land_oldest(Counter::kLgkmSmem);
}

// ---------------------------------------------------------------- memory checks

const MemoryRegion* Executor::region_for(uint64_t addr, uint64_t bytes, bool write) const {
  auto contains = [&](const MemoryRegion& m) {
    return addr >= m.base && addr - m.base <= m.bytes && bytes <= m.bytes - (addr - m.base);
  };
  // Consecutive lanes almost always hit the region of the previous access.
  if (last_region_ && contains(*last_region_) && (!write || last_region_->writable)) return last_region_;
  // Regions may overlap (a device allocation that is also a buffer of the call): any region
  // that contains the whole access and allows it will do. The lists are short.
  const MemoryRegion* readable = nullptr;
  for (const MemoryRegion& m : ctx_.regions) {
    if (!contains(m)) continue;
    if (!write || m.writable) return last_region_ = &m;
    readable = &m;
  }
  return write ? nullptr : readable;
}

void Executor::check_global(uint64_t addr, uint32_t bytes, bool write, int lane) {
  if (region_for(addr, bytes, write)) return;
  const MemoryRegion* any = write ? region_for(addr, bytes, false) : nullptr;
  if (write && any)
    fault(fmt::format("lane {} writes {} bytes at 0x{:x} inside read-only region '{}'", lane, bytes, addr, any->name));
  fault(fmt::format("lane {} {} {} bytes at 0x{:x}, outside every buffer of the call", lane,
                    write ? "writes" : "reads", bytes, addr));
}

void Executor::lds_out_of_range(uint64_t offset, uint32_t bytes, int lane, bool write) const {
  fault(fmt::format("lane {} {} {} bytes of LDS at offset 0x{:x}, beyond the {} bytes allocated", lane,
                    write ? "writes" : "reads", bytes, offset, wg_.lds.size()));
}

// ---------------------------------------------------------------- scheduling

void Executor::init_waves() {
  const KernelInfo& k = *ctx_.kernel;
  const KernelDescriptor& kd = k.kd;
  const uint32_t threads = ctx_.block[0] * ctx_.block[1] * ctx_.block[2];
  const uint32_t nwaves = (threads + kLanes - 1) / kLanes;
  wg_.lds.assign(ctx_.lds_bytes, 0);
  // LDS contents are undefined at dispatch; a fixed non-zero pattern makes reads of
  // never-written LDS visible instead of silently zero.
  for (size_t i = 0; i < wg_.lds.size(); ++i) wg_.lds[i] = static_cast<uint8_t>(0xA5 ^ (i * 131));

  const uint32_t total_vgprs = kd.vgpr_count();
  // accum_offset may equal the total (no AGPRs); past it the descriptor allocates none.
  const uint32_t accum = std::min(kd.accum_offset(), total_vgprs);
  if (wg_.trace) {
    wg_.trace->waves.assign(nwaves, {});
    wg_.trace->lines.assign(nwaves, {});
  }
  for (uint32_t wi = 0; wi < nwaves; ++wi) {
    auto wave = std::make_unique<Wave>();
    Wave& w = *wave;
    w.wg = &wg_;
    w.id_in_group = wi;
    if (wg_.trace) w.timing = &wg_.trace->waves[wi];
    w.total_vgprs = total_vgprs;
    w.accum_offset = accum;
    w.num_vgprs = std::min<uint32_t>(total_vgprs, 256);  // 8-bit VGPR fields: v0..v255
    w.num_agprs = std::min<uint32_t>(total_vgprs - accum, 256);
    w.num_sgprs = 102;
    // Registers not initialized by the dispatch hold garbage on hardware: poison them.
    w.regs.assign(size_t(std::max<uint32_t>(total_vgprs, 1)) * kLanes, 0x7FBADBADu);
    for (size_t i = 0; i < w.s.size(); ++i) w.s[i] = 0x7FBADBADu;
    w.scc = false;
    // MODE from compute_pgm_rsrc1: FLOAT_MODE (round [3:0], denorm [7:4]), DX10_CLAMP, IEEE,
    // FP16_OVFL (MODE bit 23: saturating FP8/BF8/F16 conversions).
    w.mode = kd.float_mode() | (kd.dx10_clamp() ? 1u << 8 : 0) | (kd.ieee_mode() ? 1u << 9 : 0) |
             (kd.fp16_overflow() ? 1u << 23 : 0);
    w.pc = k.entry;

    // EXEC: the work-items of this wave that exist.
    const uint32_t first = wi * kLanes;
    const uint32_t active = std::min<uint32_t>(kLanes, threads - first);
    w.set_exec(active == 64 ? ~0ull : ((1ull << active) - 1));
    w.set_vcc(0);
    w.s[operand::kM0] = 0x7FBADBADu;
    // Private segment: FLAT_SCRATCH (s102/s103) holds the wave's scratch address, as the SPI sets
    // it with architected flat scratch; the bytes start as garbage like every other memory.
    if (kd.enable_private_segment()) {
      w.scratch_lane_bytes = (kd.private_segment_fixed_size + 3) & ~3u;
      w.scratch.assign(size_t(w.scratch_lane_bytes) * kLanes, 0xA5);
      const uint64_t base = reinterpret_cast<uint64_t>(w.scratch.data());
      w.s[102] = uint32_t(base);
      w.s[103] = uint32_t(base >> 32);
    }

    // User SGPRs in the order of AMDGPUUsage "Initial Kernel Execution State".
    uint32_t sg = 0;
    auto put64 = [&](uint64_t v) { w.s[sg++] = uint32_t(v); w.s[sg++] = uint32_t(v >> 32); };
    if (kd.user_private_segment_buffer()) { put64(0); put64(0); }
    if (kd.user_dispatch_ptr()) put64(ctx_.dispatch_ptr);
    if (kd.user_queue_ptr()) put64(0);
    if (kd.user_kernarg_segment_ptr()) put64(ctx_.kernarg_address);
    if (kd.user_dispatch_id()) put64(0);
    if (kd.user_flat_scratch_init()) put64(0);
    if (kd.user_private_segment_size()) w.s[sg++] = w.scratch_lane_bytes;
    // Preloaded kernel arguments follow (gfx950 kernarg preload).
    for (uint32_t i = 0; i < kd.kernarg_preload_dwords(); ++i) {
      // Checked here, before the SGPR file or host memory past the arguments is touched.
      if (sg >= kd.user_sgpr_count())
        fault(fmt::format("kernel descriptor preloads {} kernel-argument dwords after {} other user SGPRs but "
                          "USER_SGPR_COUNT is {}", kd.kernarg_preload_dwords(), sg - i, kd.user_sgpr_count()));
      const uint64_t at = ctx_.kernarg_address + 4 * (uint64_t(kd.kernarg_preload_offset()) + i);
      if (!region_for(at, 4, false))
        fault(fmt::format("kernel descriptor preloads kernel-argument dword {} past the kernel arguments",
                          kd.kernarg_preload_offset() + i));
      uint32_t v = 0;
      std::memcpy(&v, reinterpret_cast<const uint8_t*>(at), 4);
      w.s[sg++] = v;
    }
    if (sg > kd.user_sgpr_count())
      fault(fmt::format("kernel descriptor enables {} user SGPRs but USER_SGPR_COUNT is {}", sg, kd.user_sgpr_count()));
    sg = kd.user_sgpr_count();
    for (int d = 0; d < 3; ++d)
      if (kd.enable_workgroup_id(d)) w.s[sg++] = wg_.id[d];
    if (kd.enable_workgroup_info()) w.s[sg++] = 0;
    // ENABLE_PRIVATE_SEGMENT gives no wave-offset SGPR with architected flat scratch (LLVM
    // SIMachineFunctionInfo: PrivateSegmentWaveByteOffset only without it); FLAT_SCRATCH is set.

    // Work-item ids: gfx90a and later pack x, y, z into v0 ([9:0], [19:10], [29:20]).
    if (w.num_vgprs == 0) fault("kernel descriptor allocates no VGPRs");
    for (int l = 0; l < kLanes; ++l) {
      const uint32_t t = first + l;
      const uint32_t x = t % ctx_.block[0], y = (t / ctx_.block[0]) % ctx_.block[1],
                     z = t / (ctx_.block[0] * ctx_.block[1]);
      uint32_t packed = x;
      if (kd.enable_vgpr_workitem_id() >= 1) packed |= y << 10;
      if (kd.enable_vgpr_workitem_id() >= 2) packed |= z << 20;
      w.vreg(0)[l] = l < int(active) ? packed : 0;
    }
    wg_.waves.push_back(std::move(wave));
  }
}

void Executor::run() {
  init_waves();
  std::vector<Wave*> runnable;
  for (;;) {
    runnable.clear();
    bool any_alive = false;
    for (auto& w : wg_.waves) {
      if (w->done) continue;
      any_alive = true;
      if (!w->at_barrier) runnable.push_back(w.get());
    }
    if (!any_alive) break;
    if (runnable.empty()) {
      // Every live wave waits at s_barrier: release them (waves that ended do not count).
      if (ctx_.order_checks) record_unfenced_writes();
      for (auto& w : wg_.waves) w->at_barrier = false;
      continue;
    }
    // Strict: a random wave for a random slice, to show missing waits and barriers.
    // Hardware: one instruction of the wave with the fewest ticks (ties at random), so that the
    // waves advance together as the hardware's do, and a load to LDS lands about when its
    // data would (the order lds_dma_order.cpp gives such accesses is then the replay's).
    Wave* w = runnable[rng().below(static_cast<uint32_t>(runnable.size()))];
    const bool hardware = ctx_.rules == RuleSet::kHardware;
    if (hardware)
      for (Wave* r : runnable)
        if (r->ticks < w->ticks) w = r;
    const uint32_t quantum = hardware ? 1 : 1 + rng().below(24);
    for (uint32_t q = 0; q < quantum; ++q)
      if (!step(*w)) break;
  }
}

// Hardware rules: an s_waitcnt whose vmcnt retires a load to LDS not yet landed waits, in
// scheduling ticks, until kLoadToLdsTicks after the load's issue: the other waves issue that
// many instructions first, as they would during the load's round trip. False: not yet.
bool Executor::wait_for_load_to_lds(Wave& w, const Instruction& in) {
  if (in.enc != Encoding::kSopp || in.op != op::S_WAITCNT) return true;
  const uint32_t vmcnt = waitcnt_vmcnt(in.simm16);
  uint64_t ready = 0;
  for (size_t i = 0; i + vmcnt < w.vm_queue.size(); ++i) {
    const PendingOp* op = w.vm_queue[i];
    if (op->kind == PendingOp::kGlobalLoadToLds && !op->landed)
      ready = std::max(ready, op->issue_tick + kLoadToLdsTicks);
  }
  if (w.ticks >= ready) return true;
  w.ticks = ready;
  return false;
}

bool Executor::step(Wave& w) {
  w_ = &w;
  in_ = nullptr;
  const Instruction* in = ctx_.object->at(w.pc);
  if (!in) {
    fault(fmt::format("program counter 0x{:x} is not the start of an instruction in .text", w.pc));
  }
  in_ = in;
  if (in->enc == Encoding::kInvalid) fault(fmt::format("undecodable instruction word 0x{:08x}", in->word0));
  if (ctx_.rules == RuleSet::kHardware && !wait_for_load_to_lds(w, *in)) return false;
  if (w.timing) w.timing->push_back({in->pc, 0, 0});
  // Full EXEC is the common case; the builtin is a library call on hosts built without POPCNT.
  const uint64_t exec = w.exec();
  w.lane_instructions += exec == ~0ull ? 64 : static_cast<uint64_t>(popcnt(exec));
  if (++w.instructions > ctx_.max_instructions_per_wave)
    fault(fmt::format("wave exceeded {} instructions (endless loop?)", ctx_.max_instructions_per_wave));
  maybe_complete_random();
  next_pc_ = w.pc + in->size;
  branch_taken_ = false;
  const uint64_t clock_before = w.clock;
  switch (in->enc) {
    case Encoding::kSop1:
    case Encoding::kSop2:
    case Encoding::kSopk:
    case Encoding::kSopc: execute_salu(*this); break;
    case Encoding::kSopp: execute_sopp(*this); break;
    case Encoding::kSmem: execute_smem(*this); break;
    case Encoding::kVop1:
    case Encoding::kVop2:
    case Encoding::kVopc:
    case Encoding::kVop3: execute_valu(*this); break;
    case Encoding::kVop3p: execute_vop3p(*this); break;
    case Encoding::kDs: execute_ds(*this); break;
    case Encoding::kMubuf: execute_mubuf(*this); break;
    case Encoding::kFlat: execute_flat(*this); break;
    default: fault("unsupported encoding");
  }
  if (w.clock == clock_before) w.clock += 1;  // s_nop advances it itself
  ++w.ticks;
  const bool traced = ctx_.trace.enabled && wg_.linear_id == ctx_.trace.workgroup &&
                      w.id_in_group == ctx_.trace.wave && ctx_.trace.out;
  if (traced) trace_instruction(w, *in, true);
  w.pc = next_pc_;
  if (w.done) {
    drain_all();
    return false;
  }
  return !w.at_barrier;
}

void Executor::trace_instruction(const Wave& w, const Instruction& in, bool) {
  std::ostream& os = *ctx_.trace.out;
  os << fmt::format("[wg {} wave {}] pc 0x{:05x} {:<36} exec={:016x} vcc={:016x} scc={} vm={} lgkm={}\n",
                    wg_.linear_id, w.id_in_group, in.pc, in.name, w.exec(), w.vcc(), int(w.scc),
                    w.vm_queue.size(), w.lds_queue.size() + w.smem_set.size());
  if (!ctx_.trace.registers) return;
  auto dump_v = [&](const char* prefix, const uint32_t* row, uint32_t n) {
    os << fmt::format("    {}{}:", prefix, n);
    for (int l = 0; l < kLanes; ++l) os << fmt::format("{}{:08x}", l % 8 == 0 ? "\n      " : " ", row[l]);
    os << "\n";
  };
  if (in.dst != operand::kNone && in.dst >= operand::kVgpr0 &&
      (in.enc == Encoding::kVop1 || in.enc == Encoding::kVop2 || in.enc == Encoding::kVop3 ||
       in.enc == Encoding::kVop3p)) {
    const uint32_t r = in.dst - operand::kVgpr0;
    if (in.enc == Encoding::kVop3p && in.acc_cd) {
      if (r < w.num_agprs) dump_v("a", w.areg(r), r);
    } else if (r < w.num_vgprs) {
      dump_v("v", w.vreg(r), r);
    }
  } else if (in.dst != operand::kNone && in.dst < 128) {
    os << fmt::format("    s{} = 0x{:08x}\n", in.dst, w.s[in.dst]);
  }
}

}  // namespace zyfa::emu
