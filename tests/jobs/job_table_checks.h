// Checks a built job table against every property the kernels rely on, computed from the
// parameters alone (not from the builder's own arithmetic), so the checks can catch a
// builder that is consistently wrong.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "host/job_table.h"

namespace zyfa::test {

struct JobTableReport {
  std::vector<std::string> violations;  // empty when the table is correct
  uint64_t jobs = 0;
  uint64_t min_wg_work = 0;  // key tiles run by the least loaded workgroup
  uint64_t max_wg_work = 0;  // key tiles run by the most loaded workgroup
  uint64_t half_jobs = 0;

  bool ok() const { return violations.empty(); }
  std::string summary() const;  // the first violations, or the work figures
};

JobTableReport check_job_table(const JobTableParams& params, const JobTable& table);

// "S1000_T256_B1_H128_Gqa4_G256_X8"
std::string job_table_name(const JobTableParams& params);

}  // namespace zyfa::test

namespace zyfa {
// Lets GoogleTest show parameters by their configuration name instead of raw bytes.
void PrintTo(const JobTableParams& params, std::ostream* os);
}  // namespace zyfa
