// Placeholder until the job-table builder lands.
#include "host/job_table.h"

namespace zyfa {
bool build_job_table(const JobTableParams&, JobTable* out) {
  out->words.clear();
  return false;
}
}  // namespace zyfa
