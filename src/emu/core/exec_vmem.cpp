// Vector and scalar memory: MUBUF (buffer_*), FLAT/GLOBAL (global_*; flat_* only for global
// addresses), SMEM (s_load_*, s_buffer_load_*). Loads read memory when they complete and
// stores write it when they complete; see executor.cpp for when that is.
//
// Sources: AMD CDNA4 ISA "Vector Memory Buffer Instructions" (address = V#.base + soffset +
// inst_offset + voffset + V#.stride * index, or the swizzled form; resource descriptor
// fields: buffer_address.h), "Flat, Scratch and Global Instructions", "Scalar Memory
// Operations". Range checking of buffer accesses: each dword (each element for sub-dword
// accesses) is checked on its own against num_records using inst_offset + voffset (soffset
// excluded), bytes for raw buffers (stride 0) and records for structured ones (an index from
// idxen or ADD_TID, stride != 0); out-of-range loads return 0 and out-of-range stores are
// dropped (LLVM AMDGPUUsage "Relaxed Buffer OOB Mode" describes the per-dword check).
// Everything that survives the range check must lie inside a buffer of the call or the
// wave's own scratch, or the kernel stops.
//
// Scratch (gfx950 has architected flat scratch, LLVM AMDGPUUsage processor table): scratch_*
// address a lane's private bytes by offset = (SVE ? vaddr : 0) + (saddr != off ? saddr : 0) +
// inst_offset; the wave's scratch interleaves lanes per dword (scratch_lane_offset). An offset
// outside the kernel's private segment stops the kernel.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "emu/core/buffer_address.h"
#include "emu/core/executor.h"
#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

struct Access {
  uint8_t dwords = 1;      // registers per lane
  uint8_t elem_bytes = 4;  // 1, 2 or 4
  bool sign = false;
  int8_t d16 = -1;         // -1 full register, 0 low half, 1 high half
  bool store = false;
  bool to_lds = false;
};

// The pending operation of a vector memory access (store, load, or load to LDS).
PendingOp* new_vmem_op(Executor& x, const Access& a) {
  PendingOp* op = x.new_op(a.store ? PendingOp::kGlobalStore : a.to_lds ? PendingOp::kGlobalLoadToLds : PendingOp::kGlobalLoad,
                           Counter::kVm);
  op->dwords = a.dwords;
  op->elem_bytes = a.elem_bytes;
  op->sign_extend = a.sign;
  op->d16 = a.d16;
  return op;
}

// VALU writes an SGPR, then a VMEM instruction reads it: 5 wait states.
void check_vmem_sgpr_read(Executor& x, uint16_t s, const char* kind) {
  const Wave& w = x.wave();
  if (s < 128 && w.valu_sgpr_write_clock[s] && wait_states_after_stamp(w, w.valu_sgpr_write_clock[s]) < 5)
    x.fault(fmt::format("VMEM hazard: s{} read by a {} instruction less than 5 wait states after a VALU write", s, kind));
}

// Untyped loads/stores shared by MUBUF and GLOBAL (same opcode numbers for the common ones).
bool describe(uint16_t o, bool mubuf, Access* a) {
  switch (o) {
    case op::LOAD_UBYTE: *a = {1, 1, false, -1, false}; return true;
    case op::LOAD_SBYTE: *a = {1, 1, true, -1, false}; return true;
    case op::LOAD_USHORT: *a = {1, 2, false, -1, false}; return true;
    case op::LOAD_SSHORT: *a = {1, 2, true, -1, false}; return true;
    case op::LOAD_DWORD: *a = {1, 4, false, -1, false}; return true;
    case op::LOAD_DWORDX2: *a = {2, 4, false, -1, false}; return true;
    case op::LOAD_DWORDX3: *a = {3, 4, false, -1, false}; return true;
    case op::LOAD_DWORDX4: *a = {4, 4, false, -1, false}; return true;
    case op::STORE_BYTE: *a = {1, 1, false, -1, true}; return true;
    case op::STORE_BYTE_D16_HI: *a = {1, 1, false, 1, true}; return true;
    case op::STORE_SHORT: *a = {1, 2, false, -1, true}; return true;
    case op::STORE_SHORT_D16_HI: *a = {1, 2, false, 1, true}; return true;
    case op::STORE_DWORD: *a = {1, 4, false, -1, true}; return true;
    case op::STORE_DWORDX2: *a = {2, 4, false, -1, true}; return true;
    case op::STORE_DWORDX3: *a = {3, 4, false, -1, true}; return true;
    case op::STORE_DWORDX4: *a = {4, 4, false, -1, true}; return true;
    case op::LOAD_UBYTE_D16: *a = {1, 1, false, 0, false}; return true;
    case op::LOAD_UBYTE_D16_HI: *a = {1, 1, false, 1, false}; return true;
    case op::LOAD_SBYTE_D16: *a = {1, 1, true, 0, false}; return true;
    case op::LOAD_SBYTE_D16_HI: *a = {1, 1, true, 1, false}; return true;
    case op::LOAD_SHORT_D16: *a = {1, 2, false, 0, false}; return true;
    case op::LOAD_SHORT_D16_HI: *a = {1, 2, false, 1, false}; return true;
    default: break;
  }
  if (!mubuf) {
    switch (o) {
      case op::LOAD_LDS_UBYTE: *a = {1, 1, false, -1, false, true}; return true;
      case op::LOAD_LDS_SBYTE: *a = {1, 1, true, -1, false, true}; return true;
      case op::LOAD_LDS_USHORT: *a = {1, 2, false, -1, false, true}; return true;
      case op::LOAD_LDS_SSHORT: *a = {1, 2, true, -1, false, true}; return true;
      case op::LOAD_LDS_DWORD: *a = {1, 4, false, -1, false, true}; return true;
      case op::LOAD_LDS_DWORDX3: *a = {3, 4, false, -1, false, true}; return true;
      case op::LOAD_LDS_DWORDX4: *a = {4, 4, false, -1, false, true}; return true;
      default: break;
    }
  }
  return false;
}

// Registers of a load's destination (VGPR or AGPR per the ACC bit), marked in flight.
void mark_destination(Executor& x, PendingOp* op, uint32_t first, int count) {
  x.check_reg_range(first, uint32_t(count), "load writes");
  for (int r = 0; r < count; ++r) {
    const uint32_t reg = first + r;
    x.check_pending(reg, "second load into");
    x.mark_pending(op, reg);
  }
}

// Store data: the VGPR/AGPR values at issue (gfx9 reads store data when the store issues).
void capture_store_data(Executor& x, PendingOp* op, uint32_t first, const Access& a) {
  x.check_reg_range(first, a.dwords, "store reads");
  for (int k = 0; k < a.dwords; ++k) {
    const uint32_t reg = first + k;
    x.hazard_check_read_vgpr(reg, false, true);  // AGPR data too (checkMAIVALUHazards)
    const uint32_t* row = reg >= kAgprBase ? x.areg_read(reg - kAgprBase) : x.vreg_read(reg);
    for (int l = 0; l < kLanes; ++l) {
      uint32_t v = row[l];
      if (a.d16 == 1) v >>= 16;
      op->data[l * 4 + k] = v;
    }
  }
}

void mark_store_data(Wave& w, uint32_t first, int dwords) {
  for (int k = 0; k < dwords; ++k)
    if (first + k < 256) w.store_data_read_until[first + k] = w.clock + 2 + 1;
}

// The common end of every VMEM issue: a store captures its data (and, when the data is read
// after issue, marks it for the store-data overwrite hazard); a load to LDS takes its LDS base
// from M0 (CDNA4 ISA "Buffer load to LDS": M0 + inst_offset + lane * 4 per dword); a load to
// registers marks its destination `dst` (VGPR n, or AGPR n + kAgprBase). Then it is issued.
void finish_vmem_issue(Executor& x, PendingOp* op, const Access& a, bool store_data_read_late, uint32_t dst) {
  Wave& w = x.wave();
  const Instruction& in = x.inst();
  if (a.store) {
    capture_store_data(x, op, in.vdata + (in.vdata_acc ? kAgprBase : 0), a);
    if (store_data_read_late && a.dwords > 2 && !in.vdata_acc) mark_store_data(w, in.vdata, a.dwords);
  } else if (a.to_lds) {
    const uint64_t t = w.salu_m0_write_clock;
    if (t) x.hazard_relaxed(RelaxedRule::kM0LdsDma, wait_states_after_stamp(w, t), operand::kM0);
    op->lds_base = x.sread(operand::kM0) + uint32_t(in.offset);
  } else {
    op->dst_reg = dst + (in.vdata_acc ? kAgprBase : 0);
    mark_destination(x, op, op->dst_reg, a.dwords);
  }
  x.issue(op);
}

uint32_t vaddr_value(Executor& x, uint32_t vgpr, int lane) {
  return x.vreg_read(vgpr)[lane];
}

// Memory a VMEM access may touch: the buffers of the call, or this wave's own scratch (a
// private buffer resource built from FLAT_SCRATCH reaches it).
void check_memory(Executor& x, uint64_t addr, uint32_t bytes, bool write, int lane) {
  const Wave& w = x.wave();
  const uint64_t s = reinterpret_cast<uint64_t>(w.scratch.data());
  if (!w.scratch.empty() && addr >= s && addr - s <= w.scratch.size() && bytes <= w.scratch.size() - (addr - s))
    return;
  x.check_global(addr, bytes, write, lane);
}

}  // namespace

void execute_mubuf(Executor& x) {
  const Instruction& in = x.inst();
  if (in.op == op::WBL2 || in.op == op::INV) {
    // Cache write-back / invalidate: there is no cache model (a landed write is visible to
    // every wave), so they only take their place in the vmcnt order.
    PendingOp* op = x.new_op(PendingOp::kGlobalStore, Counter::kVm);
    op->exec = 0;
    x.issue(op);
    return;
  }
  Access a;
  if (!describe(in.op, true, &a)) x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
  if (in.lds) {
    if (a.store || a.d16 >= 0) x.fault(fmt::format("{} with lds is not a valid combination", in.name));
    a.to_lds = true;
  }
  uint32_t rs[4];
  for (int i = 0; i < 4; ++i) rs[i] = x.sread(in.srsrc + i);
  const BufferResource r = decode_buffer_resource(rs);
  // With ADD_TID_ENABLE the DATA_FORMAT field holds stride bits, not a format.
  if (r.data_format == 0 && !r.add_tid)
    x.fault("buffer resource DATA_FORMAT is 0 (invalid): gfx9 untyped buffer accesses need a non-zero format "
            "(e.g. word3 = 0x00020000)");
  const uint32_t soffset = x.sread(in.soffset);
  for (uint16_t s : {uint16_t(in.srsrc), uint16_t(in.srsrc + 1), uint16_t(in.srsrc + 2), uint16_t(in.srsrc + 3),
                     uint16_t(in.soffset)})
    check_vmem_sgpr_read(x, s, "buffer");

  PendingOp* op = new_vmem_op(x, a);
  const uint64_t exec = op->exec;
  if (in.offen || in.idxen) {
    x.hazard_check_read_vgpr(in.vaddr, false, true);
    if (in.offen && in.idxen) x.hazard_check_read_vgpr(in.vaddr + 1, false, true);
  }
  // index = (idxen ? vaddr : 0) + (ADD_TID ? lane : 0); records are checked when there is an
  // index and a stride.
  const bool structured = r.stride != 0 && (in.idxen || r.add_tid);
  for (int l = 0; l < kLanes; ++l) {
    if (!((exec >> l) & 1)) continue;
    uint32_t index = 0, voffset = 0;
    if (in.idxen) index = vaddr_value(x, in.vaddr, l);
    if (r.add_tid) index += uint32_t(l);
    if (in.offen) voffset = vaddr_value(x, in.vaddr + (in.idxen ? 1 : 0), l);
    const uint64_t off = uint64_t(voffset) + uint32_t(in.offset);
    if (r.swizzle) {
      const std::string why = swizzled_access_undefined(r, structured, off, a.elem_bytes, a.dwords);
      if (!why.empty()) x.fault(fmt::format("lane {}: {} is undefined in the ISA", l, why));
    }
    for (int k = 0; k < a.dwords; ++k) {
      const uint64_t o = off + uint64_t(k) * a.elem_bytes;
      const bool in_range = buffer_element_in_range(r, structured, index, o, a.elem_bytes);
      const uint64_t addr = r.base + soffset + buffer_element_offset(r, index, o);
      op->valid[l * 4 + k] = in_range;
      op->addr[l * 4 + k] = addr;
      if (in_range) check_memory(x, addr, a.elem_bytes, a.store, l);
    }
  }
  // > 64-bit store data is read after issue when soffset is not an SGPR (has12DWordStoreHazard).
  finish_vmem_issue(x, op, a, in.soffset >= 128, in.vdata);
}

namespace {

// Lane l's access at private offset `off`: bounds-checked against the private segment, then
// placed in the wave's scratch one dword at a time (scratch_lane_offset).
void place_private(Executor& x, PendingOp* op, const Access& a, int l, uint32_t off) {
  Wave& w = x.wave();
  const uint32_t bytes = a.dwords * a.elem_bytes;
  if (uint64_t(off) + bytes > w.scratch_lane_bytes)
    x.fault(fmt::format("lane {} {} {} private bytes at offset 0x{:x}, beyond the kernel's {}-byte private segment", l,
                        a.store ? "writes" : "reads", bytes, off, w.scratch_lane_bytes));
  if (off % 4 + a.elem_bytes > 4 || (a.elem_bytes == 4 && off % 4 != 0))
    x.fault(fmt::format("lane {}: {}-byte scratch access at unaligned private offset 0x{:x} (each dword of a lane "
                        "lies in a different place of the interleaved scratch)", l, a.elem_bytes, off));
  w.scratch_used = std::max<uint32_t>(w.scratch_used, off + bytes);
  for (int k = 0; k < a.dwords; ++k) {
    op->addr[l * 4 + k] = reinterpret_cast<uint64_t>(w.scratch.data() + scratch_lane_offset(uint32_t(l), off + 4 * k));
    op->valid[l * 4 + k] = 1;
  }
}

// scratch_*: each lane's private offset, bounds-checked against the private segment, then
// placed in the wave's scratch one dword at a time (scratch_lane_offset).
void execute_scratch(Executor& x) {
  const Instruction& in = x.inst();
  Access a;
  if (!describe(in.op, false, &a)) x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
  if (a.to_lds && a.dwords > 1) x.fault(fmt::format("{} is not a scratch instruction", in.name));
  // gfx940+ scratch encoding: bit 13 (the LDS bit of global_*) is SVE, "vaddr is used".
  const bool sve = in.lds;
  const bool use_saddr = in.saddr != 0x7F;
  uint32_t soff = 0;
  if (use_saddr) {
    soff = x.sread(in.saddr);
    check_vmem_sgpr_read(x, in.saddr, "scratch");
  }
  PendingOp* op = new_vmem_op(x, a);
  const uint64_t exec = op->exec;
  const uint32_t* lo = nullptr;
  if (sve) {
    x.hazard_check_read_vgpr(in.vaddr, false, true);
    lo = x.vreg_read(in.vaddr);
  }
  for (int l = 0; l < kLanes; ++l) {
    if (!((exec >> l) & 1)) continue;
    // 32-bit private address arithmetic; a negative result wraps to a huge offset and fails
    // the bounds check.
    place_private(x, op, a, l, (sve ? lo[l] : 0u) + soff + uint32_t(in.offset));
  }
  finish_vmem_issue(x, op, a, true, in.vdst);
}

}  // namespace

void execute_flat(Executor& x) {
  const Instruction& in = x.inst();
  Access a;
  if (in.seg == 1) return execute_scratch(x);
  if (!describe(in.op, false, &a)) x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
  // global_*: address = (saddr == off ? vaddr (64-bit) : saddr (64-bit) + vaddr (32-bit)) + offset.
  // flat_* is treated as global: any address outside the buffers of the call faults.
  const bool use_saddr = in.seg == 2 && in.saddr != 0x7F;
  uint64_t sbase = 0;
  if (use_saddr) {
    sbase = x.sread64(in.saddr);
    for (uint16_t s : {uint16_t(in.saddr), uint16_t(in.saddr + 1)}) check_vmem_sgpr_read(x, s, "global");
  }
  PendingOp* op = new_vmem_op(x, a);
  const uint64_t exec = op->exec;
  x.hazard_check_read_vgpr(in.vaddr, false, true);
  if (!use_saddr) x.hazard_check_read_vgpr(in.vaddr + 1, false, true);
  const uint32_t* lo = x.vreg_read(in.vaddr);
  const uint32_t* hi = use_saddr ? nullptr : x.vreg_read(in.vaddr + 1);
  // global_*: nothing but the range check can stop a lane, so the lanes' bounding range is
  // checked once; only when it is not inside one buffer are the dwords checked one by one,
  // in lane order (the same first fault).
  const bool global = in.seg == 2;
  uint64_t box_lo = ~0ull, box_hi = 0;
  for (int l = 0; l < kLanes; ++l) {
    if (!((exec >> l) & 1)) continue;
    const uint64_t addr = (use_saddr ? sbase + lo[l] : (uint64_t(lo[l]) | (uint64_t(hi[l]) << 32))) + int64_t(in.offset);
    // flat_* in the private aperture: the low 32 bits are the lane's private offset.
    if (in.seg == 0 && (addr >> 32) == kPrivateApertureHi) {
      if (a.to_lds) x.fault(fmt::format("{} from the private aperture is not modelled", in.name));
      place_private(x, op, a, l, uint32_t(addr));
      continue;
    }
    if (in.seg == 0 && (addr >> 32) == kSharedApertureHi)
      x.fault(fmt::format("lane {}: flat access to the LDS aperture (0x{:x}) is not modelled", l, addr));
    for (int k = 0; k < a.dwords; ++k) {
      const uint64_t ak = addr + uint64_t(k) * a.elem_bytes;
      op->addr[l * 4 + k] = ak;
      op->valid[l * 4 + k] = 1;
      if (!global) x.check_global(ak, a.elem_bytes, a.store, l);
    }
    const uint64_t end = addr + uint64_t(a.dwords) * a.elem_bytes;
    box_lo = std::min(box_lo, addr);
    box_hi = std::max<uint64_t>(box_hi, end < addr ? ~0ull : end);  // a range past 2^64 fails below
  }
  if (global && exec && !(box_hi > box_lo && x.region_for(box_lo, box_hi - box_lo, a.store))) {
    for (int l = 0; l < kLanes; ++l)
      if ((exec >> l) & 1)
        for (int k = 0; k < a.dwords; ++k) x.check_global(op->addr[l * 4 + k], a.elem_bytes, a.store, l);
  }
  finish_vmem_issue(x, op, a, true, in.vdst);
}

void execute_smem(Executor& x) {
  const Instruction& in = x.inst();
  int dwords = 0;
  bool buffer = false;
  switch (in.op) {
    case op::S_LOAD_DWORD: dwords = 1; break;
    case op::S_LOAD_DWORDX2: dwords = 2; break;
    case op::S_LOAD_DWORDX4: dwords = 4; break;
    case op::S_LOAD_DWORDX8: dwords = 8; break;
    case op::S_LOAD_DWORDX16: dwords = 16; break;
    case op::S_BUFFER_LOAD_DWORD: dwords = 1; buffer = true; break;
    case op::S_BUFFER_LOAD_DWORDX2: dwords = 2; buffer = true; break;
    case op::S_BUFFER_LOAD_DWORDX4: dwords = 4; buffer = true; break;
    case op::S_BUFFER_LOAD_DWORDX8: dwords = 8; buffer = true; break;
    case op::S_BUFFER_LOAD_DWORDX16: dwords = 16; buffer = true; break;
    case op::S_DCACHE_DISCARD: case op::S_DCACHE_DISCARD_X2: case op::S_DCACHE_INV: case op::S_DCACHE_WB:
    case op::S_DCACHE_INV_VOL: case op::S_DCACHE_WB_VOL:
      return;  // scalar cache maintenance: no cache model
    default: x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
  }
  // Offset: a 21-bit signed immediate (imm = 1) or an SGPR (imm = 0); soe adds soffset.
  int64_t offset = in.imm ? int64_t(in.offset) : int64_t(x.sread(uint16_t(in.offset & 0x7F)));
  if (in.soe) offset += x.sread(in.soffset);
  PendingOp* op = x.new_op(PendingOp::kScalarLoad, Counter::kLgkmSmem);
  op->dwords = uint8_t(dwords);
  if (!buffer) {
    const uint64_t base = x.sread64(in.sbase);
    const uint64_t addr = (base + offset) & ~3ull;
    op->saddr = addr;
    for (int k = 0; k < dwords; ++k) op->valid[k] = 1;
    x.check_global(addr, 4 * dwords, false, 0);
  } else {
    uint32_t rs[4];
    for (int i = 0; i < 4; ++i) rs[i] = x.sread(in.sbase + i);
    const uint64_t base = uint64_t(rs[0]) | (uint64_t(rs[1] & 0xFFFF) << 32);
    const uint32_t num_records = rs[2];
    const uint64_t o = uint64_t(offset) & ~3ull;
    op->saddr = base + o;
    for (int k = 0; k < dwords; ++k) {
      op->valid[k] = o + 4 * k + 4 <= num_records;
      if (op->valid[k]) x.check_global(base + o + 4 * k, 4, false, 0);
    }
  }
  if (in.sdata + dwords > 102) x.fault(fmt::format("s_load writes s{}..s{} beyond the SGPR file", in.sdata, in.sdata + dwords - 1));
  op->dst_reg = kSgprBase + in.sdata;
  for (int k = 0; k < dwords; ++k) {
    x.check_pending(kSgprBase + in.sdata + k, "second load into");
    x.mark_pending(op, kSgprBase + in.sdata + k);
  }
  x.issue(op);
}

void complete_global_op(Executor& x, PendingOp& op) {
  Wave& w = x.wave();
  if (op.kind == PendingOp::kScalarLoad) {
    for (int k = 0; k < op.dwords; ++k) {
      uint32_t v = 0;
      if (op.valid[k]) std::memcpy(&v, reinterpret_cast<const void*>(op.saddr + 4 * k), 4);
      w.s[op.dst_reg - kSgprBase + k] = v;
    }
    return;
  }
  const uint64_t exec = op.exec;
  // Whole dwords (nearly every access): copies of a constant size, not a memcpy call each.
  const bool whole = op.elem_bytes == 4 && op.d16 < 0;
  const auto load32 = [](uint64_t a) {
    uint32_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(a), 4);
    return v;
  };
  if (op.kind == PendingOp::kGlobalStore && whole) {
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      for (int k = 0; k < op.dwords; ++k)
        if (op.valid[l * 4 + k]) std::memcpy(reinterpret_cast<void*>(op.addr[l * 4 + k]), &op.data[l * 4 + k], 4);
    }
    return;
  }
  if (op.kind == PendingOp::kGlobalStore) {
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      for (int k = 0; k < op.dwords; ++k) {
        if (!op.valid[l * 4 + k]) continue;
        const uint32_t v = op.data[l * 4 + k];
        std::memcpy(reinterpret_cast<void*>(op.addr[l * 4 + k]), &v, op.elem_bytes);
      }
    }
    return;
  }
  if (op.kind == PendingOp::kGlobalLoadToLds) {
    // LDS address = M0 + inst_offset + lane * 4 for sizes up to a dword, lane * 16 for the
    // gfx950 12- and 16-byte forms (LLVM AMDGPUUsage "GFX9 LDS DMA"; the immediate offset
    // applies to both the memory and the LDS address).
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      for (int k = 0; k < op.dwords; ++k) {
        uint32_t v = 0;
        if (op.valid[l * 4 + k]) std::memcpy(&v, reinterpret_cast<const void*>(op.addr[l * 4 + k]), op.elem_bytes);
        if (op.sign_extend && op.elem_bytes == 1) v = uint32_t(int32_t(int8_t(v)));
        if (op.sign_extend && op.elem_bytes == 2) v = uint32_t(int32_t(int16_t(v)));
        const uint64_t lds = uint64_t(op.lds_base) + uint64_t(l) * (op.dwords > 1 ? 16 : 4) + uint64_t(k) * 4;
        std::memcpy(x.lds_ptr(lds, 4, l, true), &v, 4);
      }
    }
    return;
  }
  // Register loads.
  if (whole) {
    for (int k = 0; k < op.dwords; ++k) {
      const uint32_t reg = op.dst_reg + k;
      uint32_t* row = reg >= kAgprBase ? w.areg(reg - kAgprBase) : w.vreg(reg);
      for (int l = 0; l < kLanes; ++l)
        if ((exec >> l) & 1) row[l] = op.valid[l * 4 + k] ? load32(op.addr[l * 4 + k]) : 0;
    }
    return;
  }
  for (int k = 0; k < op.dwords; ++k) {
    const uint32_t reg = op.dst_reg + k;
    uint32_t* row = reg >= kAgprBase ? w.areg(reg - kAgprBase) : w.vreg(reg);
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      uint32_t v = 0;
      if (op.valid[l * 4 + k]) std::memcpy(&v, reinterpret_cast<const void*>(op.addr[l * 4 + k]), op.elem_bytes);
      if (op.sign_extend && op.elem_bytes == 1) v = uint32_t(int32_t(int8_t(v)));
      if (op.sign_extend && op.elem_bytes == 2) v = uint32_t(int32_t(int16_t(v)));
      if (op.d16 == 0) v = (row[l] & 0xFFFF0000u) | (v & 0xFFFF);
      else if (op.d16 == 1) v = (row[l] & 0xFFFFu) | (v << 16);
      row[l] = v;
    }
  }
}

}  // namespace zyfa::emu
