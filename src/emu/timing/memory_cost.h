// What the lane addresses of one memory instruction cost, computed by the emulator when the
// timing trace is on (executor.cpp, Executor::issue) and replayed by the cycle model
// (cu_model.cpp). Kept here, next to the model that gives the numbers their meaning.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/emulator.h"

namespace zyfa::emu {
struct PendingOp;
}

namespace zyfa::emu::timing {

// LDS (ds_*): cost = LDS clocks the access occupies the CU's LDS for, from its 64 banks of
// 4 bytes: the lanes are served in phases of 256 bytes (64 lanes of b32, 32 of b64, 16 of
// b96/b128 in the lane groups measured on gfx950), and in each phase the bank that most
// distinct dwords map to sets the clocks (the same dword read by several lanes is a
// broadcast). VMEM: cost = distinct 128-byte lines the active lanes touch, counted from
// `origin` (the start of the buffer, as a device allocation aligns it). bytes = data moved.
// The lines themselves go to `lines` (WorkgroupTrace::lines) as `index` (the record's place
// in the wave's trace), `origin`, then each line's address (origin + 128 * line).
void record_memory_cost(const PendingOp& op, uint64_t origin, IssueRecord* rec, uint64_t index,
                        std::vector<uint64_t>* lines);

// The LDS clocks of one access: `addr[lane * 4 + k]` is the byte address of dword k
// (k < dwords) of lane `lane`, for the lanes set in `exec`.
uint32_t lds_bank_cycles(const uint64_t* addr, int dwords, uint64_t exec);

}  // namespace zyfa::emu::timing
