// s_waitcnt and LDS: results of loads land late and randomly; reading (or overwriting) a
// register before the wait that covers its load stops the kernel, whatever the seed; LDS
// writes another wave must see need a wait before the barrier.
#include <functional>

#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

std::vector<uint32_t> triple(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 3 * uint32_t(i);
  return v;
}

void expect_fault_seeds(const char* kernel, const char* words, uint32_t lds_block = 64) {
  TestKernels k("waitcnt");
  for (uint64_t seed : {1ull, 2ull, 3ull, 0xABCDEFull}) {
    SCOPED_TRACE(::testing::Message() << kernel << " seed " << seed);
    expect_fault(k.run(kernel, 64 * 16, triple(128), {}, lds_block, 1, seed), {words});
  }
}

TEST(EmuWaitcnt, WaitedLoadsAreCorrect) {
  TestKernels k("waitcnt");
  for (uint64_t seed : {1ull, 2ull, 3ull}) {
    const auto r = k.run("k_vm_wait", 64 * 16, triple(128), {}, 64, 1, seed);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    for (uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], 3 * lane + 3 * (lane + 1));
  }
}

TEST(EmuWaitcnt, ReadBeforeVmcntFaults) { expect_fault_seeds("k_vm_nowait", "still in flight"); }

TEST(EmuWaitcnt, VmcntOneCoversTheOlderLoadOnly) {
  TestKernels k("waitcnt");
  const auto ok = k.run("k_vm_partial_ok", 64 * 16, triple(128));
  ASSERT_TRUE(ok.result.ok) << ok.result.error;
  for (uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(ok.out[lane * 16], 3 * lane + 1);
  expect_fault_seeds("k_vm_partial_bad", "still in flight");
}

TEST(EmuWaitcnt, OverwriteOfLoadDestinationFaults) { expect_fault_seeds("k_vm_overwrite", "overwrite of v2"); }

TEST(EmuWaitcnt, ScalarLoadNeedsLgkmcnt) { expect_fault_seeds("k_smem_nowait", "read of s20"); }

TEST(EmuWaitcnt, LdsReadNeedsLgkmcnt) { expect_fault_seeds("k_lds_nowait", "read of v6"); }

// SMEM returns out of order, so lgkmcnt(N > 0) guarantees no scalar load: using one after it
// faults for every seed, not only for the return orders a seed happens to draw.
void expect_fault_every_seed(const char* kernel, const char* words) {
  TestKernels k("waitcnt");
  for (uint64_t seed = 1; seed <= 32; ++seed) {
    SCOPED_TRACE(::testing::Message() << kernel << " seed " << seed);
    expect_fault(k.run(kernel, 64 * 16, triple(128), {}, 64, 1, seed), {words});
  }
}

// The waited form runs to the end for seeds 1..8, with out[lane * 16] == want(lane) when
// `want` is given.
void expect_ok_every_seed(const char* kernel, const std::function<uint32_t(uint32_t)>& want) {
  TestKernels k("waitcnt");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(::testing::Message() << kernel << " seed " << seed);
    const auto r = k.run(kernel, 64 * 16, triple(128), {}, 64, 1, seed);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    if (!want) continue;
    for (uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], want(lane)) << "lane " << lane;
  }
}

TEST(EmuWaitcnt, ScalarLoadsReturnOutOfOrder) {
  expect_fault_every_seed("k_smem_two_partial", "read of s20");
  expect_ok_every_seed("k_smem_two_full", nullptr);
}

// LDS and SMEM share lgkmcnt: an LDS read is guaranteed by lgkmcnt(N) only when N younger LDS
// operations are outstanding, never because a scalar load might have returned first.
TEST(EmuWaitcnt, LdsBehindScalarLoadNeedsLgkmcntZero) {
  expect_fault_every_seed("k_lds_then_smem_partial", "read of v6");
  expect_ok_every_seed("k_lds_smem_lds_older_ok", [](uint32_t lane) { return 7 + lane; });
}

TEST(EmuWaitcnt, LdsSameWaveInOrder) {
  TestKernels k("waitcnt");
  const auto r = k.run("k_lds_wait", 64 * 16, triple(128));
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(r.out[lane * 16], 7 + lane);
}

TEST(EmuLds, ExchangeAcrossWavesWithBarrier) {
  TestKernels k("lds");
  for (uint64_t seed : {1ull, 2ull, 3ull, 4ull}) {
    const auto r = k.run("k_lds_exchange", 256 * 16, {}, {}, 256, 1, seed);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    for (uint32_t t = 0; t < 256; ++t) EXPECT_EQ(r.out[t * 16], (t + 64) % 256) << "work-item " << t;
  }
}

// Without s_waitcnt before s_barrier a wave may read another wave's LDS before the write
// lands. The emulator records the writes still unwaited at the barrier release and stops the
// first access by another wave to those bytes: the same fault for every interleaving.
TEST(EmuLds, MissingWaitBeforeBarrierFaultsForEverySeed) {
  TestKernels k("lds");
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    expect_fault(k.run("k_lds_exchange_late_wait", 256 * 16, {}, {}, 256, 1, seed),
                 {"missing s_waitcnt before s_barrier", "LDS bytes"});
  }
}

// The same for global memory: a store not waited for (vmcnt) before the barrier, loaded by
// another wave after it.
TEST(EmuLds, MissingStoreWaitBeforeBarrierFaultsForEverySeed) {
  TestKernels k("lds");
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const auto ok = k.run("k_global_exchange", 256 * 16 + 256, {}, {}, 256, 1, seed);
    ASSERT_TRUE(ok.result.ok) << ok.result.error;
    for (uint32_t t = 0; t < 256; ++t) EXPECT_EQ(ok.out[t * 16], (t + 64) % 256) << "work-item " << t;
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    expect_fault(k.run("k_global_exchange_late_wait", 256 * 16 + 256, {}, {}, 256, 1, seed),
                 {"global memory bytes", "missing s_waitcnt before s_barrier"});
  }
}

// A read not waited for before the barrier may be overtaken by another wave's write after it
// (LDS operations of different waves may be reordered): write-after-read faults as well.
TEST(EmuLds, UnwaitedReadOvertakenByWriteAfterBarrierFaultsForEverySeed) {
  TestKernels k("lds");
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const auto ok = k.run("k_lds_war", 256 * 16, {}, {}, 256, 1, seed);
    ASSERT_TRUE(ok.result.ok) << ok.result.error;
    for (uint32_t t = 0; t < 256; ++t) EXPECT_EQ(ok.out[t * 16], (t + 64) % 256) << "work-item " << t;
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    expect_fault(k.run("k_lds_war_late_wait", 256 * 16, {}, {}, 256, 1, seed),
                 {"this write after the barrier may overtake that read"});
  }
}

// Only other waves' accesses to the unwaited bytes count: a wave that writes LDS, passes a
// barrier and reads back its own bytes (program order) is correct without a wait.
TEST(EmuLds, OwnUnwaitedWriteAcrossBarrierIsAllowed) {
  TestKernels k("lds");
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const auto r = k.run("k_lds_own_readback", 256 * 16, {}, {}, 256, 1, seed);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    for (uint32_t t = 0; t < 256; ++t) EXPECT_EQ(r.out[t * 16], t) << "work-item " << t;
  }
}

// Two waves writing and reading the same LDS bytes with no s_barrier between them race: the
// emulator stops the second access for every interleaving (read after write, write after
// write, write after read; whole dwords, and bytes against a whole dword), not only when the
// interleaving happens to reorder them.
TEST(EmuLds, RaceBetweenWavesFaultsForEverySeed) {
  TestKernels k("lds");
  for (const char* kernel : {"k_lds_race_raw", "k_lds_race_waw", "k_lds_race_war", "k_lds_race_bytes"}) {
    for (uint64_t seed = 1; seed <= 16; ++seed) {
      SCOPED_TRACE(::testing::Message() << kernel << " seed " << seed);
      expect_fault(k.run(kernel, 256 * 16, {}, {}, 256, 1, seed), {"LDS race"});
    }
  }
}

// A barrier between the accesses, different bytes of one dword, and reads by many waves of
// the same bytes are not races.
TEST(EmuLds, OrderedOrDisjointAccessesAreNoRace) {
  TestKernels k("lds");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto a = k.run("k_lds_read_barrier_write", 256 * 16, {}, {}, 256, 1, seed);
    ASSERT_TRUE(a.result.ok) << a.result.error;
    const auto b = k.run("k_lds_bytes_no_race", 256 * 16, {}, {}, 256, 1, seed);
    ASSERT_TRUE(b.result.ok) << b.result.error;
    for (uint32_t t = 0; t < 256; ++t) EXPECT_EQ(b.out[t * 16], 0x40404040u) << "work-item " << t;
  }
}

}  // namespace
}  // namespace zyfa::emu::test
