// The AMD Instinct MI355X (gfx950, CDNA4) as the timing model sees it. Every rate and latency
// is a named constant with its source: "D" documented by AMD or stated in LLVM's AMDGPU
// scheduling model, "M" measured by a third party, "I" inferred here, "fitted" chosen so that
// the model meets the measured AITER anchors (docs/timing-model.md says how, and the residuals).
#pragma once

#include <cstdint>

namespace zyfa::emu::timing {

// ---- chip
constexpr int kCus = 256;               // D: 8 XCDs x 32 CUs (rocm.docs.amd.com gpu-specs, MI355X)
constexpr int kXcds = 8;                // D
constexpr int kCusPerXcd = kCus / kXcds;
constexpr double kPeakClockGhz = 2.4;   // D: peak engine clock (2.5 PF BF16 = 256 x 4096 x 2.4e9)
// Fitted: the clock that turns modelled cycles into time. The cycle model is clock-free; at
// the 2.4 GHz peak it predicts AITER's measured 950 / 1199 / 1236 TFLOP/s (S 2K / 16K / 32K)
// 1.46 / 1.50 / 1.48 times too fast, a nearly constant factor that no latency or rate of the
// model explains and that the best measured GEMMs show as well (64-67% of the peak-clock
// MFMA rate): power-limited clocks under MFMA load. Least squares in log over the three
// anchors gives 2.4 / 1.48 = 1.62 GHz (docs/timing-model.md, "Calibration").
constexpr double kSustainedClockGhz = 1.62;
// ---- compute unit
constexpr int kSimdsPerCu = 4;          // D: 4 x SIMD16 per CU
constexpr int kIssuePeriod = 4;         // D: the CU arbiter visits one SIMD per clock, so each
                                        // SIMD gets an issue slot every 4 clocks (rocprofiler-
                                        // compute pipeline-descriptions)
constexpr int kMaxWavesPerSimd = 8;     // D (CDNA2/3), I (gfx950)
constexpr int kVgprsPerSimdLane = 512;  // D: 128 KiB per SIMD, unified arch + acc file
constexpr int kVgprGranule = 8;         // D: LLVM AMDGPUBaseInfo getVGPRAllocGranule (gfx90a+)
constexpr uint32_t kLdsBytesPerCu = 160 * 1024;  // D
// ---- VALU
constexpr int kValuCycles = 4;          // D: wave64 over SIMD16 (SISchedule.td Write32Bit, 1 pass)
constexpr int kTransCycles = 16;        // D (model): v_exp/v_log/v_rcp/v_rsq/v_sqrt quarter rate
                                        // (SISchedule.td WriteTrans32 = 4 passes)
constexpr int kPackedF32Cycles = 4;     // I: v_pk_fma/mul/add_f32 full rate (157 TF FP32 vector)
constexpr int kMfmaCyclesPerPass = 4;   // D: SISchedule.td, one pass = 4 clocks; the matrix pipe
                                        // takes the next MFMA when the previous one leaves it
constexpr int kMfmaIssueCycles = 4;     // D (CDNA3): MFMA co-executes with VALU after a 4-clock
                                        // issue (amd_matrix_instruction_calculator)
// ---- scalar, branches, barriers
constexpr int kSmemLatency = 200;       // I: no gfx950 figure (LLVM placeholder 5 passes is a
                                        // scheduling weight); scalar loads hit the 16 KiB sL1
constexpr int kTakenBranchCycles = 16;  // I: instruction-buffer refill after a taken branch
constexpr int kBarrierCycles = 16;      // U/I: release of s_barrier once the last wave arrives
constexpr int kSleepCyclesPerUnit = 64; // D: s_sleep N sleeps about 64 x N clocks (CDNA ISA)
constexpr int kWorkgroupLaunchCycles = 200;  // I: wave creation and SGPR/VGPR setup
// ---- LDS
constexpr int kLdsBanks = 64;           // M: 64 banks x 4 B on gfx950 (HipKittens bank tests)
constexpr int kLdsLatency = 64;         // U/I: LDS load-to-use after the access is served
// ---- vector memory
constexpr int kCacheLineBytes = 128;    // D: L2 line
constexpr double kL2BytesPerClkPerCu = 64.0;  // I: 16 channels x 128 B/clk per XCD shared by 32
                                              // CUs; the vL1D (128 B/clk) is not the limit
constexpr int kVmemLatency = 500;       // I: load-to-use of a line served by the L2 or the MALL;
                                        // LLVM's placeholder is 80 passes (320 clocks)
constexpr int kHbmExtraLatency = 300;   // I: a line that comes from DRAM comes back this much
                                        // later (no MI355X figure)
constexpr int kL2BytesPerXcd = 4 << 20; // D: 4 MiB L2 per XCD (gpu-specs)
// A CU's own lines stay in the L2 while the XCD's 32 CUs, all alike, touch no more than the
// L2's size: the CU's share, 4 MiB / 32 = 1024 lines of its own accesses since.
constexpr int kL2LinesPerCu = kL2BytesPerXcd / kCusPerXcd / kCacheLineBytes;
constexpr double kHbmBytesPerSec = 8.0e12;        // D: 8 TB/s peak (gpu-specs)
// M: the HBM bandwidth a copy kernel reaches on the MI355X, 5.65 TB/s (AMD CK "LDS bank
// conflicts on CDNA" slides, an LDS-transposing copy; a plain copy may reach a little more).
constexpr double kHbmAchievedBytesPerSec = 5.65e12;
// HBM bytes per engine clock, at the engine clock the cycles are turned into time with (the
// memory clock does not follow the engine clock); a CU gets its share of the CUs that have
// work, all drawing on it alike.
constexpr double kHbmBytesPerClk = kHbmAchievedBytesPerSec / (kSustainedClockGhz * 1e9);
constexpr double hbm_bytes_per_clk_per_cu(int busy_cus) { return kHbmBytesPerClk / (busy_cus > 0 ? busy_cus : 1); }
constexpr double kHbmBytesPerClkPerCu = hbm_bytes_per_clk_per_cu(kCus);  // every CU busy
constexpr double kLaunchOverheadUs = 0.0;   // kernel time only (events around the kernel)

}  // namespace zyfa::emu::timing
