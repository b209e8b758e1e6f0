// The memory system of the MI355X timing model on micro-kernels (kernels/vmem.s): a stream
// of fresh lines runs at the CU's share of HBM bandwidth, re-read lines at its share of L2
// bandwidth, and a copy over the whole chip reaches the modelled HBM bandwidth.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "emu/timing/memory_system.h"
#include "emu/timing/mi355x.h"
#include "micro_kernel.h"

namespace zyfa::emu::timing {
namespace {

constexpr double kWaveLoadBytes = 64 * 16;  // one global_load_dwordx4 of a wave

// `workgroups` of four waves, CU 0 simulated.
Prediction run_reads(const char* kernel, uint32_t workgroups) {
  static std::vector<uint32_t> in(256 * 64 * 4096 / 4), out(16);
  MicroLaunch l("vmem.co", kernel, 256, workgroups);
  l.cus = 1;
  return predict_micro(l.buffers(out, in));
}

// Clocks that more loads of each of the four waves add: the steady state of the stream.
double added_clocks(const char* shorter, const char* longer, uint32_t workgroups) {
  const Prediction a = run_reads(shorter, workgroups), b = run_reads(longer, workgroups);
  std::printf("%s: %llu cycles, %s: %llu cycles\n", shorter, static_cast<unsigned long long>(a.cycles), longer,
              static_cast<unsigned long long>(b.cycles));
  return double(b.cycles) - double(a.cycles);
}

TEST(TimingMemory, FreshLinesStreamAtTheCusShareOfHbm) {
  // One workgroup per CU over the chip; 32 more loads x 4 waves x 1 KiB of lines no other
  // workgroup reads: all from HBM, at a 256th of its bandwidth.
  const double expect = 32 * 4 * kWaveLoadBytes / kHbmBytesPerClkPerCu;
  EXPECT_NEAR(added_clocks("k_stream_32", "k_stream_64", kCus), expect, 0.01 * expect);
}

TEST(TimingMemory, RereadLinesStreamAtTheCusShareOfL2) {
  // The same 4 KiB again and again: L2 hits after the first pass, bound by the L2 share.
  const double expect = 64 * 4 * kWaveLoadBytes / kL2BytesPerClkPerCu;
  EXPECT_NEAR(added_clocks("k_reread_64", "k_reread_128", 1), expect, 0.01 * expect);
  const Prediction p = run_reads("k_reread_128", 1);
  EXPECT_EQ(p.stats.l2_lines, 128u * 4 * 8);
  EXPECT_EQ(p.stats.l2_own_hits, p.stats.l2_lines - 4 * 8);  // all but the first 4 KiB
}

// The predicted time of a copy of `workgroups` x 16 KiB over the chip; CU 0 simulated, its
// neighbours sampled: no line is shared, so reads and writes all go to HBM.
double copy_seconds(uint32_t workgroups) {
  const size_t bytes = size_t(workgroups) * 16384;
  std::vector<uint32_t> in(bytes / 4), out(bytes / 4);
  MicroLaunch l("vmem.co", "k_copy", 256, workgroups);
  l.cus = 1;
  const Prediction p = predict_micro(l.buffers(out, in));
  std::printf("copy of %zu MiB: %s\n", bytes >> 20, p.json().c_str());
  return p.kernel_us * 1e-6;
}

TEST(TimingMemory, CopyOverTheChipRunsAtTheModelledHbmBandwidth) {
  // 12 and then 16 workgroups per CU (8 resident at once): the 4 more of each CU copy 16 KiB
  // each, read and written back through HBM. Both end with the CU's share of the L2 full of
  // lines still to be written back, so the difference runs at the modelled HBM bandwidth.
  const double added_bytes = 2.0 * 1024 * 16384;
  const double bytes_per_s = added_bytes / (copy_seconds(4096) - copy_seconds(3072));
  std::printf("copy: %.2f TB/s in the steady state (modelled HBM %.2f TB/s)\n", bytes_per_s / 1e12,
              kHbmAchievedBytesPerSec / 1e12);
  EXPECT_NEAR(bytes_per_s, kHbmAchievedBytesPerSec, 0.02 * kHbmAchievedBytesPerSec);
}

TEST(TimingMemory, ALoadOfALineInFlightWaitsForItsFill) {
  // A second load of a line whose HBM fill is still on its way hits in the L2, but its data
  // is the fill's: it cannot come back an L2 latency after its request, before the first.
  CuMemory m(CuMemoryConfig{});
  const uint64_t line = 0x1000;
  VmemAccess a;
  a.line_count = 1;
  a.bytes = 64;
  a.lines = &line;
  a.known = 1;
  const VmemTiming first = m.access(0, a);
  const VmemTiming second = m.access(8, a);
  std::printf("first load done at %llu, the second (8 clocks later) at %llu\n",
              static_cast<unsigned long long>(first.done), static_cast<unsigned long long>(second.done));
  EXPECT_EQ(m.own_hits, 1u);
  EXPECT_GE(second.done, first.done);
  // Once the line is in, a load of it takes the L2's latency alone.
  const VmemTiming later = m.access(first.done + 1000, a);
  EXPECT_LT(later.done - (first.done + 1000), first.done);
}

}  // namespace
}  // namespace zyfa::emu::timing
