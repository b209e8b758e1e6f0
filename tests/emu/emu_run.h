// Running one attention configuration through the public API on the emu backend, with a
// chosen interleaving seed, poisoned outputs and a poisoned guard past the output.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/host_run.h"

namespace zyfa::test {

// The emu backend reads its interleaving seed from $ZYFA_EMU_SEED at every launch.
inline HostRun run_emu(AttnData& a, uint64_t interleave_seed) {
  setenv("ZYFA_EMU_SEED", std::to_string(interleave_seed).c_str(), 1);
  return run_on_host(a, ZYFA_BACKEND_EMU);
}

// The kernel names of the emulator's launch lines ($ZYFA_EMU_STATS=1) in `log`, space-separated.
inline std::string launched_kernels(const std::string& log) {
  std::string names;
  const std::string tag = "zyfa emu: ";
  for (size_t at = log.find(tag); at != std::string::npos; at = log.find(tag, at + 1)) {
    const size_t b = at + tag.size();
    names += (names.empty() ? "" : " ") + log.substr(b, log.find(' ', b) - b);
  }
  return names;
}

using EmuRunner = std::function<HostRun(AttnData&, uint64_t interleave_seed)>;

// Runs `a` under each of `interleavings` (with `runner`, run_emu unless given): every run must
// succeed without writing past the output, or writing the LSE when none was asked for, and
// give the output and LSE of the first run bit for bit. *first receives the first run.
inline void run_emu_interleavings(AttnData& a, const std::vector<uint64_t>& interleavings, HostRun* first,
                                  const EmuRunner& runner = run_emu) {
  for (size_t i = 0; i < interleavings.size(); ++i) {
    HostRun run = runner(a, interleavings[i]);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << "interleaving seed " << interleavings[i] << ": " << run.error;
    EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
    if (!a.cfg.lse) {
      EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
    }
    if (i == 0) {
      *first = std::move(run);
      continue;
    }
    EXPECT_EQ(0, std::memcmp(first->out.data(), run.out.data(), first->out.size() * 2))
        << "output differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
    if (a.cfg.lse) {
      EXPECT_EQ(0, std::memcmp(first->lse.data(), run.lse.data(), first->lse.size() * 4))
          << "LSE differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
    }
  }
}

}  // namespace zyfa::test
