// Running one configuration through the public API on the cpu backend.
#pragma once

#include <gtest/gtest.h>

#include "support/host_run.h"

namespace zyfa::test {

inline HostRun run_cpu(AttnData& a) { return run_on_host(a, ZYFA_BACKEND_CPU); }

}  // namespace zyfa::test
