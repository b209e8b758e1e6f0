// Cycle model of one MI355X compute unit replaying the issue traces of the workgroups the
// dispatcher gives it (docs/timing-model.md): 4 SIMDs, each offered an issue slot every 4
// clocks in which its waves issue at most one instruction each and one per category; a VALU
// pipe and a matrix pipe per SIMD, one LDS and one vector-memory path per CU; s_waitcnt
// counters released by modelled latencies; barriers; workgroups resident as the kernel
// descriptor allows.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"
#include "emu/timing/memory_system.h"

namespace zyfa::emu::timing {

// Why a resident wave did not issue, in wave-clocks (docs/timing-model.md).
enum Stall : int {
  kStallWaitVm, kStallWaitLgkm, kStallBarrier, kStallNop, kStallMatrixBusy, kStallValuBusy,
  kStallArbitration, kStallBranch, kStallSleep, kStallCount,
};
const char* stall_name(int s);

struct CuStats {
  uint64_t cycles = 0;          // clock at which the last workgroup ended
  uint64_t matrix_busy = 0;     // summed over the 4 SIMDs
  uint64_t valu_busy = 0;       // summed over the 4 SIMDs (MFMA issue included)
  uint64_t lds_busy = 0;
  uint64_t vmem_busy = 0;
  uint64_t wave_cycles = 0;     // summed residency of every wave
  uint64_t instructions = 0;
  uint64_t mfma_flops_passes = 0;  // MFMA passes issued
  double hbm_bytes = 0;            // drawn from HBM (memory_system.h)
  uint64_t l2_lines = 0, l2_own_hits = 0;  // vector memory lines; those still in the L2 from the CU's own access
  uint64_t stall[kStallCount] = {};
  void add(const CuStats& o);
};

// Workgroups resident at once on one CU (VGPRs, LDS, wave slots).
int workgroups_per_cu(const KernelInfo& kernel, uint32_t waves_per_workgroup, uint32_t lds_bytes);

// Told of every instruction the replay issues in an issue slot (s_nop, s_waitcnt, s_setprio
// and barriers take none): the workgroup's position in `order`, the wave, the instruction's
// index in that wave's trace, its issue clock, and the clocks between which it touches memory
// (an LDS access while the LDS serves it, a load to LDS when its data returns, other vector
// memory from its turn on the L2 path to its return; the issue clock for the rest).
struct IssueObserver {
  virtual ~IssueObserver() = default;
  virtual void issued(size_t workgroup, uint32_t wave, size_t index, uint64_t clock, uint64_t mem_begin,
                      uint64_t mem_end) = 0;
};

// Runs the workgroups in `order` (traces, in dispatch order) on one CU; `memory` says what
// the CU's vector memory path sees of the rest of the chip.
CuStats simulate_cu(const LoadedCodeObject& object, const KernelInfo& kernel, uint32_t lds_bytes,
                    const std::vector<const WorkgroupTrace*>& order, IssueObserver* observer = nullptr,
                    const CuMemoryConfig& memory = {});

}  // namespace zyfa::emu::timing
