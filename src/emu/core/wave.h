// State of one dispatch as the executor sees it: waves (64 lanes, SGPR/VGPR/AGPR files,
// EXEC/VCC/SCC/M0/MODE), workgroups (LDS, barrier) and the memory operations still in flight.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu/core/instruction.h"
#include "emu/core/lds_race.h"
#include "emu/emulator.h"

namespace zyfa::emu {

class LoadedCodeObject;
struct KernelInfo;

constexpr int kLanes = 64;
constexpr uint32_t kMaxLdsBytes = 160 * 1024;

// Thrown by the executor; the dispatch stops and reports the message (with wave/PC context).
struct KernelFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deterministic per-workgroup random source (xorshift64*), seeded from the dispatch seed and
// the workgroup id, so the interleaving never depends on thread timing.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

// Which s_waitcnt counter a memory operation decrements.
enum class Counter : uint8_t { kVm, kLgkmLds, kLgkmSmem };

// A memory operation issued but not yet complete. Loads read memory when they complete and
// then write their registers; stores and LDS writes captured their data at issue and change
// memory when they complete. Register numbers: VGPR n = n, AGPR n = 256 + n, SGPR n = 512 + n.
struct PendingOp {
  enum Kind : uint8_t {
    kGlobalLoad, kGlobalStore, kLdsLoad, kLdsStore, kLdsAtomic, kScalarLoad, kGlobalLoadToLds,
  };
  Kind kind;
  Counter counter;
  uint8_t dwords = 1;         // per lane (loads and stores of whole dwords)
  uint8_t elem_bytes = 4;     // 1/2/4: sub-dword loads/stores
  bool sign_extend = false;   // sub-dword loads
  int8_t d16 = -1;            // -1: full dword; 0: write low half, 1: high half (d16 loads)
  uint16_t dst_reg = 0;       // first destination register (see numbering above)
  uint16_t op = 0;            // DS opcode for LDS ops that compute (atomics, permutes)
  uint64_t exec = 0;
  uint64_t seq = 0;           // issue order, for diagnostics
  uint64_t issue_clock = 0;   // the wave's wait-state clock at issue (timing claims)
  uint64_t issue_tick = 0;    // the wave's scheduling ticks at issue (Wave::ticks)
  uint32_t pc = 0;
  // Per lane per dword: address (global byte address or LDS byte offset) and data.
  // valid bit 0 of valid_mask[lane*dwords+k]: in range (buffer OOB components read 0/drop).
  std::array<uint64_t, kLanes * 4> addr;
  std::array<uint32_t, kLanes * 4> data;
  std::array<uint32_t, kLanes * 4> data2;  // second operand (DS cmpst, mskor, ...)
  std::array<uint8_t, kLanes * 4> valid;
  std::array<uint32_t, 16> sdata;          // scalar loads: up to 16 dwords
  uint64_t saddr = 0;
  uint32_t lds_base = 0;                   // LDS destination (M0-based) of loads to LDS
  // Landed: memory was read/written and destination registers hold the data. The registers
  // stay "unwaited" (a read is a fault) until an s_waitcnt retires the operation.
  bool landed = false;
  // What the op touches, per space (0 global, 1 LDS): the bounding byte range [lo, hi) (empty:
  // lo > hi) and whether it writes there. Set at issue (memory_order.cpp) so that the ordering
  // checks can pass over operations that cannot conflict without looking at every lane.
  uint64_t box_lo[2] = {~0ull, ~0ull}, box_hi[2] = {0, 0};
  bool box_write[2] = {false, false};
  bool lds_box_known = false;  // box_lo[1]/box_hi[1] set by the DS issue itself (exec_lds.cpp)
  // Set by the DS issue when it knows (0: not known): each address of a lane starts a run of
  // `lds_run` consecutive dwords, and lds_aligned: every address is a multiple of 4.
  uint8_t lds_run = 0;
  bool lds_aligned = false;
  // Hardware rules: this DS access is ordered before another wave's load to LDS still in flight
  // (lds_dma_order.cpp), so it lands at issue, before that load can.
  bool land_at_issue = false;
  uint8_t nmarked = 0;
  std::array<uint16_t, 16> marked;         // destination registers flagged in flight
  // Listed in the workgroup's unfenced accesses (memory_order.cpp): a retired pinned operation
  // is `released` and goes back to its wave's free list only when the list is replaced.
  bool pinned = false;
  bool released = false;
};

struct MfmaWrite {
  uint64_t clock = 0;   // wait-state clock at issue
  uint16_t first = 0, count = 0;  // destination register range (numbering above)
  uint8_t passes = 0;
  bool valid = false;
};

struct Workgroup;

struct Wave {
  // SGPR file indexed by the 7-bit operand code: s0..s101, flat_scratch, xnack, VCC (106/107),
  // ttmp (108-123), M0 (124), EXEC (126/127).
  std::array<uint32_t, 128> s{};
  // The unified vector register file of gfx90a and later (CDNA3/CDNA4 ISA, "Vector GPRs";
  // LLVM AMDGPUUsage, compute_pgm_rsrc3.ACCUM_OFFSET): one physical file of `total_vgprs`
  // registers per wave, register-major (regs[phys * 64 + lane]). v[i] is physical i and a[j] is
  // physical accum_offset + j, so a kernel may name v[i] up to its whole allocation and a
  // v and an a name of the same physical register see each other's writes.
  std::vector<uint32_t> regs;
  uint32_t total_vgprs = 0, accum_offset = 0;
  uint32_t num_vgprs = 0;  // v[i] valid for i < num_vgprs = min(total, 256)
  uint32_t num_agprs = 0;  // a[j] valid for j < num_agprs = total - accum_offset
  uint32_t num_sgprs = 0;
  bool scc = false;
  uint32_t mode = 0;
  uint64_t pc = 0;
  bool done = false, at_barrier = false;
  uint32_t id_in_group = 0;
  Workgroup* wg = nullptr;
  uint64_t instructions = 0, lane_instructions = 0;
  // Hardware rules: the scheduler's notion of this wave's time (Executor::run): one per
  // instruction, and an s_waitcnt that needs a load to LDS not yet landed waits until
  // kLoadToLdsTicks after that load's issue.
  uint64_t ticks = 0;
  // Private segment (architected flat scratch, exec_vmem.cpp): this wave's scratch, each
  // lane's bytes interleaved one dword at a time; FLAT_SCRATCH holds its address.
  std::vector<uint8_t> scratch;
  uint32_t scratch_lane_bytes = 0;  // the private segment of one work-item
  uint32_t scratch_used = 0;        // highest private byte any lane accessed, + 1
  std::vector<IssueRecord>* timing = nullptr;  // issue trace for the timing model, if recorded

  // In-flight memory operations, oldest first per queue (SMEM completes in any order).
  std::vector<PendingOp*> vm_queue, lds_queue, smem_set;
  std::vector<PendingOp*> free_ops;
  std::vector<std::unique_ptr<PendingOp>> op_storage;
  uint64_t next_seq = 0;
  uint32_t lds_dma_in_flight = 0;  // loads to LDS in vm_queue (memory_order.cpp)
  // Outstanding writes per scoreboard slot (physical vector register 0-511, SGPR 512-639).
  std::array<uint8_t, 640> pending_write{};
  uint32_t pending_total = 0;
  // The most recent pending op that will write each register (for messages).
  std::array<uint32_t, 640> pending_pc{};

  // Wait-state bookkeeping: `clock` advances by 1 per issued instruction, N+1 per s_nop N.
  uint64_t clock = 0;
  std::array<MfmaWrite, 512> mfma_write{};   // last MFMA writing each VGPR/AGPR
  std::array<uint64_t, 512> mfma_srcc_read_until{};  // WAR window end per register (clock)
  std::array<uint64_t, 512> mfma_srcc_read_clock{};  // clock of the MFMA that read it as SrcC
  uint64_t last_mfma_clock = 0;
  bool any_mfma = false;
  std::array<uint64_t, 512> valu_vgpr_write_clock{};   // last VALU write of each VGPR/AGPR (+1)
  std::array<uint64_t, 256> trans_vgpr_write_clock{};  // last transcendental write (+1)
  std::array<uint64_t, 256> fwd1_write_clock{};  // writes needing 1 wait state before any read (+1)
  std::array<uint64_t, 128> valu_sgpr_write_clock{};   // last VALU write of each SGPR (+1)
  uint64_t valu_exec_write_clock = 0;                  // last VALU write of EXEC (+1)
  uint64_t salu_m0_write_clock = 0;
  uint64_t setreg_mode_clock = 0;                      // last s_setreg of HW_REG_MODE (+1)
  std::array<uint64_t, 256> store_data_read_until{};   // > 64-bit VMEM store data (clock bound)

  uint64_t exec() const { return uint64_t(s[126]) | (uint64_t(s[127]) << 32); }
  void set_exec(uint64_t e) { s[126] = uint32_t(e); s[127] = uint32_t(e >> 32); }
  uint64_t vcc() const { return uint64_t(s[106]) | (uint64_t(s[107]) << 32); }
  void set_vcc(uint64_t e) { s[106] = uint32_t(e); s[107] = uint32_t(e >> 32); }
  uint32_t* vreg(uint32_t r) { return &regs[size_t(r) * kLanes]; }
  uint32_t* areg(uint32_t r) { return &regs[size_t(accum_offset + r) * kLanes]; }
  const uint32_t* vreg(uint32_t r) const { return &regs[size_t(r) * kLanes]; }
  const uint32_t* areg(uint32_t r) const { return &regs[size_t(accum_offset + r) * kLanes]; }
  // Scoreboard slot of a register in the numbering above (VGPR n, 256 + AGPR n, 512 + SGPR
  // n): vector registers by physical index, so that the v and a names of one register share
  // their in-flight state.
  uint32_t slot(uint32_t reg) const {
    if (reg < 256 || reg >= 512) return reg;
    return accum_offset + (reg - 256);
  }
};

// A memory access a wave had not waited for when an s_barrier released (memory_order.cpp):
// a copy of the operation (its queue entry may be retired and reused before the next
// release) and its footprint; the byte ranges are listed only when another wave's access
// overlaps the footprint, which is rare.
struct UnfencedAccess {
  struct Bytes {
    bool lds;
    bool write;  // a write (RAW/WAW for the other waves) or a read still in flight (WAR)
    uint64_t begin, end;
  };
  uint32_t wave = 0;
  // The operation itself, pinned (PendingOp::pinned) so that its wave does not reuse it before
  // the next barrier replaces this list: what it touches was fixed at its issue.
  PendingOp* op = nullptr;
  // Its footprint (PendingOp::box_*), kept here for the scan every later access makes.
  uint64_t box_lo[2] = {~0ull, ~0ull}, box_hi[2] = {0, 0};
  bool box_write[2] = {false, false};
  bool listed = false;       // `ranges` filled
  std::vector<Bytes> ranges;
};

struct Workgroup {
  uint32_t id[3] = {0, 0, 0};
  uint64_t linear_id = 0;
  std::vector<uint8_t> lds;
  std::vector<std::unique_ptr<Wave>> waves;
  Rng rng{1};
  // Accesses not waited for at the last barrier release; cleared at the next one.
  std::vector<UnfencedAccess> unfenced;
  // Indices into `unfenced` of the accesses that touch global memory (0) and LDS (1): an
  // access of one space needs no look at those of the other.
  std::vector<uint32_t> unfenced_in[2];
  LdsRaceShadow lds_race;  // accesses of the waves since the last barrier release (lds_race.cpp)
  // Under the hardware rules: every LDS access of the current barrier interval, in issue
  // order (lds_dma_order.cpp), to name the access a race report's tags point at.
  struct LdsAccess {
    uint32_t wave;
    uint32_t pc;
    uint64_t seq, clock;   // the op's seq in its wave, and the wave's clock at issue
    uint64_t lo, hi;       // bounding LDS byte range
    bool write, dma;       // dma: a load to LDS (it writes when its data return)
  };
  std::vector<LdsAccess> lds_log;
  WorkgroupTrace* trace = nullptr;  // set when the timing model records this workgroup
};

// The wait-state arithmetic of every hazard check, in one place. Wait states between an
// instruction issued at wave clock `c` and the one issuing now: the instructions (and s_nop
// states) strictly between them.
inline int64_t wait_states_after(const Wave& w, uint64_t c) { return int64_t(w.clock) - int64_t(c) - 1; }
// The same for a stamp that holds clock + 1, 0 meaning "never": never is far enough.
inline constexpr int64_t kNeverWritten = int64_t(1) << 40;
inline int64_t wait_states_after_stamp(const Wave& w, uint64_t stamp) {
  return stamp ? wait_states_after(w, stamp - 1) : kNeverWritten;
}

}  // namespace zyfa::emu
