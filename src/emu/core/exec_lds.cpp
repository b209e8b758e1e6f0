// LDS instructions (DS encoding without GDS). Addresses are byte offsets into the
// workgroup's LDS allocation (group segment + dynamic LDS); every access must lie inside it.
// Reads sample LDS when they complete, writes change it when they complete; both in issue
// order per wave (LGKM_CNT), see executor.cpp.
// Sources: AMD CDNA4 ISA "Local Data Share Operations" (ADDR = VGPR[addr] + offset;
// read2/write2: offset0/offset1 scaled by the element size, st64 by 64 elements; ds_swizzle
// modes; ds_permute/bpermute address = byte address / 4 of the lane).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "emu/core/ds_transpose.h"
#include "emu/core/executor.h"
#include "emu/core/fp_bits.h"
#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

enum class DsKind { kRead, kWrite, kAtomic, kAtomicRtn, kPermute, kTranspose };

struct DsShape {
  DsKind kind;
  uint8_t dwords = 1;     // dwords per address (per lane: dwords * addresses)
  uint8_t elem_bytes = 4;
  bool two_addresses = false;
  uint32_t scale = 4;     // read2/write2 offset unit in bytes
  bool sign = false;
  int8_t d16 = -1;
};

bool shape_of(uint16_t o, DsShape* s) {
  switch (o) {
    case op::DS_READ_B32: *s = {DsKind::kRead, 1}; return true;
    case op::DS_READ_B64: *s = {DsKind::kRead, 2}; return true;
    case op::DS_READ_B96: *s = {DsKind::kRead, 3}; return true;
    case op::DS_READ_B128: *s = {DsKind::kRead, 4}; return true;
    case op::DS_READ2_B32: *s = {DsKind::kRead, 1, 4, true, 4}; return true;
    case op::DS_READ2ST64_B32: *s = {DsKind::kRead, 1, 4, true, 256}; return true;
    case op::DS_READ2_B64: *s = {DsKind::kRead, 2, 4, true, 8}; return true;
    case op::DS_READ2ST64_B64: *s = {DsKind::kRead, 2, 4, true, 512}; return true;
    case op::DS_READ_U8: *s = {DsKind::kRead, 1, 1}; return true;
    case op::DS_READ_I8: *s = {DsKind::kRead, 1, 1, false, 4, true}; return true;
    case op::DS_READ_U16: *s = {DsKind::kRead, 1, 2}; return true;
    case op::DS_READ_I16: *s = {DsKind::kRead, 1, 2, false, 4, true}; return true;
    case op::DS_READ_U16_D16: *s = {DsKind::kRead, 1, 2, false, 4, false, 0}; return true;
    case op::DS_READ_U16_D16_HI: *s = {DsKind::kRead, 1, 2, false, 4, false, 1}; return true;
    case op::DS_READ_U8_D16: *s = {DsKind::kRead, 1, 1, false, 4, false, 0}; return true;
    case op::DS_READ_U8_D16_HI: *s = {DsKind::kRead, 1, 1, false, 4, false, 1}; return true;
    case op::DS_WRITE_B32: *s = {DsKind::kWrite, 1}; return true;
    case op::DS_WRITE_B64: *s = {DsKind::kWrite, 2}; return true;
    case op::DS_WRITE_B96: *s = {DsKind::kWrite, 3}; return true;
    case op::DS_WRITE_B128: *s = {DsKind::kWrite, 4}; return true;
    case op::DS_WRITE2_B32: *s = {DsKind::kWrite, 1, 4, true, 4}; return true;
    case op::DS_WRITE2ST64_B32: *s = {DsKind::kWrite, 1, 4, true, 256}; return true;
    case op::DS_WRITE2_B64: *s = {DsKind::kWrite, 2, 4, true, 8}; return true;
    case op::DS_WRITE2ST64_B64: *s = {DsKind::kWrite, 2, 4, true, 512}; return true;
    case op::DS_WRITE_B8: *s = {DsKind::kWrite, 1, 1}; return true;
    case op::DS_WRITE_B16: *s = {DsKind::kWrite, 1, 2}; return true;
    case op::DS_WRITE_B8_D16_HI: *s = {DsKind::kWrite, 1, 1, false, 4, false, 1}; return true;
    case op::DS_WRITE_B16_D16_HI: *s = {DsKind::kWrite, 1, 2, false, 4, false, 1}; return true;
    case op::DS_ADD_U32: case op::DS_SUB_U32: case op::DS_MIN_U32: case op::DS_MAX_U32: case op::DS_MIN_I32:
    case op::DS_MAX_I32: case op::DS_AND_B32: case op::DS_OR_B32: case op::DS_XOR_B32: case op::DS_ADD_F32:
    case op::DS_MIN_F32: case op::DS_MAX_F32:
      *s = {DsKind::kAtomic, 1}; return true;
    case op::DS_ADD_RTN_U32: case op::DS_SUB_RTN_U32: case op::DS_MIN_RTN_U32: case op::DS_MAX_RTN_U32:
    case op::DS_MIN_RTN_I32: case op::DS_MAX_RTN_I32: case op::DS_AND_RTN_B32: case op::DS_OR_RTN_B32:
    case op::DS_XOR_RTN_B32: case op::DS_ADD_RTN_F32: case op::DS_WRXCHG_RTN_B32:
      *s = {DsKind::kAtomicRtn, 1}; return true;
    case op::DS_BPERMUTE_B32: case op::DS_PERMUTE_B32: case op::DS_SWIZZLE_B32:
      *s = {DsKind::kPermute, 1}; return true;
    default: {
      DsTransposeShape t;
      if (!ds_transpose_shape(o, &t)) return false;
      *s = {DsKind::kTranspose, t.dwords};
      return true;
    }
  }
}

uint32_t atomic(uint16_t o, uint32_t old, uint32_t v) {
  switch (o) {
    case op::DS_ADD_U32: case op::DS_ADD_RTN_U32: return old + v;
    case op::DS_SUB_U32: case op::DS_SUB_RTN_U32: return old - v;
    case op::DS_MIN_U32: case op::DS_MIN_RTN_U32: return std::min(old, v);
    case op::DS_MAX_U32: case op::DS_MAX_RTN_U32: return std::max(old, v);
    case op::DS_MIN_I32: case op::DS_MIN_RTN_I32: return uint32_t(std::min(int32_t(old), int32_t(v)));
    case op::DS_MAX_I32: case op::DS_MAX_RTN_I32: return uint32_t(std::max(int32_t(old), int32_t(v)));
    case op::DS_AND_B32: case op::DS_AND_RTN_B32: return old & v;
    case op::DS_OR_B32: case op::DS_OR_RTN_B32: return old | v;
    case op::DS_XOR_B32: case op::DS_XOR_RTN_B32: return old ^ v;
    case op::DS_ADD_F32: case op::DS_ADD_RTN_F32: return as_u32(as_f32(old) + as_f32(v));
    // CDNA4 pseudocode DS_MIN_F32/DS_MAX_F32: MEM = DATA < MEM ? DATA : MEM (> for max): a
    // plain comparison, so a NaN on either side keeps the memory value (std::fmin/fmax
    // would return the non-NaN operand instead).
    case op::DS_MIN_F32: return as_f32(v) < as_f32(old) ? v : old;
    case op::DS_MAX_F32: return as_f32(v) > as_f32(old) ? v : old;
    case op::DS_WRXCHG_RTN_B32: return v;
    default: return old;
  }
}

}  // namespace

void execute_ds(Executor& x) {
  const Instruction& in = x.inst();
  if (in.gds) x.fault("GDS is not modelled");
  DsShape s;
  if (!shape_of(in.op, &s)) x.fault(fmt::format("instruction {} is not implemented by the emulator", in.name));
  const bool data_acc = in.vdata_acc;
  const bool reads_lds = s.kind == DsKind::kRead || s.kind == DsKind::kTranspose;
  PendingOp* op = x.new_op(reads_lds || s.kind == DsKind::kAtomicRtn || s.kind == DsKind::kPermute
                               ? PendingOp::kLdsLoad
                               : s.kind == DsKind::kWrite ? PendingOp::kLdsStore : PendingOp::kLdsAtomic,
                           Counter::kLgkmLds);
  op->op = in.op;
  op->elem_bytes = s.elem_bytes;
  op->sign_extend = s.sign;
  op->d16 = s.d16;
  const int per_lane = s.dwords * (s.two_addresses ? 2 : 1);
  op->dwords = uint8_t(per_lane);
  const uint64_t exec = op->exec;

  auto read_data = [&](uint8_t first, int count, std::array<uint32_t, kLanes * 4>& out, int at) {
    x.check_reg_range(first + (data_acc ? kAgprBase : 0), uint32_t(count), "LDS data reads");
    for (int k = 0; k < count; ++k) {
      const uint32_t reg = first + k + (data_acc ? kAgprBase : 0);
      x.hazard_check_read_vgpr(reg, false, true);  // AGPR data too (checkMAIVALUHazards)
      const uint32_t* row = reg >= kAgprBase ? x.areg_read(reg - kAgprBase) : x.vreg_read(reg);
      for (int l = 0; l < kLanes; ++l) out[l * 4 + at + k] = s.d16 == 1 ? row[l] >> 16 : row[l];
    }
  };

  x.hazard_check_read_vgpr(in.vaddr, false, true);
  const uint32_t* addr = x.vreg_read(in.vaddr);
  if (s.kind == DsKind::kPermute) {
    // Computed from registers at issue (no LDS memory is touched); the result returns later.
    uint32_t data[kLanes];
    std::memcpy(data, in.op == op::DS_SWIZZLE_B32 ? addr : x.vreg_read(in.vdata), sizeof(data));
    if (in.op != op::DS_SWIZZLE_B32) x.hazard_check_read_vgpr(in.vdata, false, true);
    const uint32_t offset = in.offset | (uint32_t(in.offset1) << 8);
    for (int l = 0; l < kLanes; ++l) op->data[l * 4] = 0;
    if (in.op == op::DS_BPERMUTE_B32) {
      for (int l = 0; l < kLanes; ++l) {
        if (!((exec >> l) & 1)) continue;
        const uint32_t src = ((addr[l] + offset) >> 2) & 63;
        op->data[l * 4] = ((exec >> src) & 1) ? data[src] : 0;
      }
    } else if (in.op == op::DS_PERMUTE_B32) {
      for (int l = 0; l < kLanes; ++l) {
        if (!((exec >> l) & 1)) continue;
        const uint32_t dst = ((addr[l] + offset) >> 2) & 63;
        op->data[dst * 4] = data[l];
      }
    } else {  // ds_swizzle_b32: offset[15] = 1 quad permute mode, else bit-mask mode (32-lane groups)
      for (int l = 0; l < kLanes; ++l) {
        if (!((exec >> l) & 1)) continue;
        int src;
        if (offset & 0x8000) {
          src = (l & ~3) | ((offset >> (2 * (l & 3))) & 3);
        } else {
          const uint32_t and_mask = offset & 0x1F, or_mask = (offset >> 5) & 0x1F, xor_mask = (offset >> 10) & 0x1F;
          src = (l & 0x20) | ((((l & 0x1F) & and_mask) | or_mask) ^ xor_mask);
        }
        op->data[l * 4] = ((exec >> src) & 1) ? data[src] : 0;
      }
    }
    op->dst_reg = in.vdst + (data_acc ? kAgprBase : 0);
    x.check_reg_range(op->dst_reg, 1, "LDS read writes");
    op->kind = PendingOp::kLdsLoad;
    op->valid.fill(0);  // marks "result precomputed" for complete_lds_op
    op->lds_base = 0xFFFFFFFFu;
    x.check_pending(op->dst_reg, "second load into");
    x.mark_pending(op, op->dst_reg);
    x.issue(op);
    return;
  }

  const uint32_t offset16 = in.offset | (uint32_t(in.offset1) << 8);
  if (s.kind == DsKind::kTranspose) {
    // The result of a lane is made of the data of the other lanes of its 16-lane group
    // (ds_transpose.cpp): with part of a group inactive it is undefined, so it is refused.
    DsTransposeShape t;
    ds_transpose_shape(in.op, &t);
    for (int g = 0; g < 4; ++g) {
      const uint64_t bits = (exec >> (16 * g)) & 0xFFFF;
      if (bits != 0 && bits != 0xFFFF)
        x.fault(fmt::format("{} with lanes {}..{} partly inactive (EXEC 0x{:016x}): the transposed result of a "
                            "16-lane group needs the data of all of its lanes", in.name, 16 * g, 16 * g + 15, exec));
    }
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      const uint64_t base = uint64_t(addr[l]) + offset16;
      if (base & (t.align - 1u))  // align is a power of two
        x.fault(fmt::format("lane {} {} at LDS offset 0x{:x}, not aligned to {} bytes", l, in.name, base, t.align));
    }
  }
  // Addresses, bounds checks at issue, and the footprint for the ordering checks.
  const uint32_t bytes = s.dwords * (s.elem_bytes < 4 ? s.elem_bytes : 4);
  uint64_t lo = ~0ull, hi = 0;
  const int naddr = s.two_addresses ? 2 : 1;
  const uint64_t offs[2] = {s.two_addresses ? uint64_t(in.offset) * s.scale : offset16, uint64_t(in.offset1) * s.scale};
  bool done = false;
  if (exec == ~0ull) {
    // Every lane active (the common case): the bounds of all lanes at once in loops that
    // vectorize; the per-lane loop below runs only when some access leaves the LDS, and it
    // reports the same first lane.
    uint32_t amin = ~0u, amax = 0;
    for (int l = 0; l < kLanes; ++l) {
      amin = std::min(amin, addr[l]);
      amax = std::max(amax, addr[l]);
    }
    const uint64_t off_lo = naddr == 2 ? std::min(offs[0], offs[1]) : offs[0];
    const uint64_t off_hi = naddr == 2 ? std::max(offs[0], offs[1]) : offs[0];
    if (uint64_t(amax) + off_hi + bytes <= x.lds_bytes()) {
      lo = uint64_t(amin) + off_lo;
      hi = uint64_t(amax) + off_hi + bytes;
      uint32_t low_bits = 0;
      for (int l = 0; l < kLanes; ++l) low_bits |= addr[l];
      // Entry a * dwords + k of a lane is its address + offs[a] + 4k: the same four offsets
      // for every lane, so each lane's four entries are one contiguous add (entries past
      // per_lane are never read).
      uint64_t delta[4] = {0, 0, 0, 0};
      for (int a = 0; a < naddr; ++a)
        for (int k = 0; k < s.dwords; ++k) delta[a * s.dwords + k] = offs[a] + 4 * uint64_t(k);
      for (int l = 0; l < kLanes; ++l)
        for (int e = 0; e < 4; ++e) op->addr[l * 4 + e] = uint64_t(addr[l]) + delta[e];
      // For the race detector: runs of s.dwords consecutive dwords, aligned when every base is.
      op->lds_run = s.dwords;
      op->lds_aligned = ((low_bits | offs[0] | (naddr == 2 ? offs[1] : 0)) & 3) == 0;
      done = true;
    }
  }
  for (uint64_t m = done ? 0 : exec; m; m &= m - 1) {
    const int l = __builtin_ctzll(m);
    for (int a = 0; a < (s.two_addresses ? 2 : 1); ++a) {
      const uint64_t base = s.two_addresses ? uint64_t(addr[l]) + uint64_t(a == 0 ? in.offset : in.offset1) * s.scale
                                            : uint64_t(addr[l]) + offset16;
      x.lds_ptr(base, bytes, l, !reads_lds);
      lo = std::min(lo, base);
      hi = std::max(hi, base + bytes);
      for (int k = 0; k < s.dwords; ++k) op->addr[l * 4 + a * s.dwords + k] = base + 4 * k;
    }
  }
  op->box_lo[1] = lo;
  op->box_hi[1] = hi;
  op->lds_box_known = true;
  if (s.kind == DsKind::kWrite) {
    if (s.two_addresses) {
      read_data(in.vdata, s.dwords, op->data, 0);
      read_data(in.data1, s.dwords, op->data, s.dwords);
    } else {
      read_data(in.vdata, s.dwords, op->data, 0);
    }
  } else if (s.kind == DsKind::kAtomic || s.kind == DsKind::kAtomicRtn) {
    read_data(in.vdata, 1, op->data, 0);
  }
  if (reads_lds || s.kind == DsKind::kAtomicRtn) {
    op->dst_reg = in.vdst + (data_acc ? kAgprBase : 0);
    // Every destination register inside the allocation: complete_lds_op writes them later.
    x.check_reg_range(op->dst_reg, uint32_t(per_lane), "LDS read writes");
    for (int k = 0; k < per_lane; ++k) {
      x.check_pending(op->dst_reg + k, "second load into");
      x.mark_pending(op, op->dst_reg + k);
    }
  }
  op->valid.fill(1);
  x.issue(op);
}

void complete_lds_op(Executor& x, PendingOp& op) {
  Wave& w = x.wave();
  const uint64_t exec = op.exec;
  auto dst_row = [&](int k) {
    const uint32_t reg = op.dst_reg + k;
    return reg >= kAgprBase ? w.areg(reg - kAgprBase) : w.vreg(reg);
  };
  if (op.lds_base == 0xFFFFFFFFu && op.kind == PendingOp::kLdsLoad) {  // permute result
    uint32_t* row = dst_row(0);
    for (int l = 0; l < kLanes; ++l) if ((exec >> l) & 1) row[l] = op.data[l * 4];
    return;
  }
  DsTransposeShape t;
  if (op.kind == PendingOp::kLdsLoad && ds_transpose_shape(op.op, &t)) {
    // Every access inside the LDS (the footprint set at issue bounds them all): the exchange
    // straight from LDS into the registers.
    if (op.lds_box_known && op.box_hi[1] <= w.wg->lds.size() &&
        ds_transpose_from_lds(t, w.wg->lds.data(), op.addr.data(), exec, dst_row(0), dst_row(1)))
      return;
    // Every lane's bytes first, then the exchange within each 16-lane group (all lanes of a
    // group are active or none, checked at issue).
    std::array<uint32_t, kLanes * 4> raw{}, out{};
    unsigned groups = 0;
    for (int l = 0; l < kLanes; ++l) {
      if (!((exec >> l) & 1)) continue;
      groups |= 1u << (l / 16);
      for (int k = 0; k < op.dwords; ++k) std::memcpy(&raw[l * 4 + k], x.lds_ptr(op.addr[l * 4 + k], 4, l, false), 4);
    }
    ds_transpose(t, raw.data(), out.data(), groups);
    for (int k = 0; k < op.dwords; ++k) {
      uint32_t* row = dst_row(k);
      for (int l = 0; l < kLanes; ++l) if ((exec >> l) & 1) row[l] = out[l * 4 + k];
    }
    return;
  }
  const bool rtn_atomic = (op.op >= op::DS_ADD_RTN_U32 && op.op <= op::DS_ADD_RTN_F32) || op.op == op::DS_WRXCHG_RTN_B32;
  // Whole-dword reads and writes with every byte inside the LDS (the footprint set at issue
  // bounds all of them; issue checked each lane too): copies without per-lane checks, in the
  // same lane order as the general loop below.
  if (op.elem_bytes == 4 && op.d16 < 0 && op.box_hi[1] <= w.wg->lds.size()) {
    uint8_t* lds = w.wg->lds.data();
    if (op.kind == PendingOp::kLdsLoad && op.op != 0 && !rtn_atomic) {
      for (int k = 0; k < op.dwords; ++k) {
        uint32_t* row = dst_row(k);
        if (exec == ~0ull) {
          for (int l = 0; l < kLanes; ++l) std::memcpy(&row[l], lds + op.addr[l * 4 + k], 4);
        } else {
          for (int l = 0; l < kLanes; ++l)
            if ((exec >> l) & 1) std::memcpy(&row[l], lds + op.addr[l * 4 + k], 4);
        }
      }
      return;
    }
    if (op.kind == PendingOp::kLdsStore) {
      for (int l = 0; l < kLanes; ++l) {
        if (!((exec >> l) & 1)) continue;
        for (int k = 0; k < op.dwords; ++k) std::memcpy(lds + op.addr[l * 4 + k], &op.data[l * 4 + k], 4);
      }
      return;
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    if (!((exec >> l) & 1)) continue;
    for (int k = 0; k < op.dwords; ++k) {
      const uint64_t a = op.addr[l * 4 + k];
      if (op.kind == PendingOp::kLdsStore) {
        const uint32_t v = op.data[l * 4 + k];
        std::memcpy(x.lds_ptr(a, op.elem_bytes, l, true), &v, op.elem_bytes);
      } else if (op.kind == PendingOp::kLdsLoad && op.op != 0 &&
                 !(op.op >= op::DS_ADD_RTN_U32 && op.op <= op::DS_ADD_RTN_F32) && op.op != op::DS_WRXCHG_RTN_B32) {
        uint32_t v = 0;
        std::memcpy(&v, x.lds_ptr(a, op.elem_bytes, l, false), op.elem_bytes);
        if (op.sign_extend && op.elem_bytes == 1) v = uint32_t(int32_t(int8_t(v)));
        if (op.sign_extend && op.elem_bytes == 2) v = uint32_t(int32_t(int16_t(v)));
        uint32_t* row = dst_row(k);
        if (op.d16 == 0) v = (row[l] & 0xFFFF0000u) | (v & 0xFFFF);
        else if (op.d16 == 1) v = (row[l] & 0xFFFFu) | (v << 16);
        row[l] = v;
      } else {  // atomics: read-modify-write in lane order
        uint32_t old;
        uint8_t* p = x.lds_ptr(a, 4, l, true);
        std::memcpy(&old, p, 4);
        const uint32_t nv = atomic(op.op, old, op.data[l * 4 + k]);
        std::memcpy(p, &nv, 4);
        if (op.kind == PendingOp::kLdsLoad) dst_row(k)[l] = old;
      }
    }
  }
}

}  // namespace zyfa::emu
