#pragma once
// The job-trace tables of dtbench report (--sacct, --trace; docs/report.md, "Job traces"): per trace
// the jobs read, the CDFs of GPU-job duration and queueing delay, the shares of final states and of
// GPU time by job size, and every row left out of the distributions.

#include <vector>

#include "experiments/report/jobs/job_trace.h"
#include "experiments/report/report_table.h"

namespace dtbench::report {

// trace_jobs, job_duration_cdf, queue_delay_cdf, final_states, gpu_time_by_size, trace_skipped.
std::vector<Table> traceTables(const std::vector<JobTrace>& traces);

}  // namespace dtbench::report
