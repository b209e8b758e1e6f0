// The kBalancedWork schedule of build_job_table (host/job_table.h); called only by it.
#pragma once

#include "host/job_table.h"

namespace zyfa {

bool build_balanced_job_table(const JobTableParams& params, JobTable* out);

}  // namespace zyfa
