#pragma once
// Run directories joined with sacct (docs/report.md, "Job table" and "Cost"): a run records its
// Slurm job id in config.json as `slurm_job_id` (a string; null or absent off Slurm), matched
// exactly against sacct's JobID (an array task as `1234_5`, as sacct prints it). With --sacct the job
// table gains `slurm_job_id, queue_wait_s, requeues, slurm_state` and the cost table
// `time_to_result_s` after `gpu_hours`; without --sacct neither table changes.

#include <string>
#include <vector>

#include "experiments/report/jobs/job_trace.h"
#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/scaling_tables.h"

namespace dtbench::report {

// `run`'s config.json slurm_job_id (a string, or a whole number written as one); empty when absent.
std::string slurmJobIdOf(const RunData& run);

// The job of `id` in the first sacct trace that has it; nullptr when none does.
const SlurmJob* findSlurmJob(const std::vector<JobTrace>& traces, const std::string& id);

// Appends the join's columns to jobTable(runs) (`jobs` has one row per run, in order).
void addSlurmColumns(Table& jobs, const std::vector<RunData>& runs, const std::vector<JobTrace>& traces);

// Inserts time_to_result_s after gpu_hours in costTable(rows).
void addTimeToResult(Table& cost, const std::vector<ScalingRow>& rows, const std::vector<JobTrace>& traces);

}  // namespace dtbench::report
