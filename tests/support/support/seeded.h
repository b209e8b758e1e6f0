// A test's configuration with its input seed drawn from the test's key (seed_for: a fixed
// seed per key unless the run asks for fresh ones), so that a failure reruns alike.
#pragma once

#include <string>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

inline AttnConfig seeded(AttnConfig c, const std::string& key_prefix = "") {
  c.seed = seed_for(key_prefix + c.name());
  return c;
}

}  // namespace zyfa::test
