// Running one attention configuration through the public API on the emu backend, with a
// chosen interleaving seed, poisoned outputs and a poisoned guard past the output.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/host_run.h"

namespace zyfa::test {

// The emu backend reads its interleaving seed from $ZYFA_EMU_SEED at every launch.
inline HostRun run_emu(AttnData& a, uint64_t interleave_seed) {
  setenv("ZYFA_EMU_SEED", std::to_string(interleave_seed).c_str(), 1);
  return run_on_host(a, ZYFA_BACKEND_EMU);
}

}  // namespace zyfa::test
