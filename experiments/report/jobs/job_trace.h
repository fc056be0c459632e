#pragma once
// JobTrace: one job trace (a sacct file or a Helios-layout CSV) reduced to what the trace tables
// need (docs/report.md, "Job traces"): per ended GPU job its duration, queueing delay, GPU time,
// GPUs and normalised final state (32 bytes a job, so a million jobs fit in 32 MB), the counts of
// every row, and every row left out of the distributions with its line and reason. A sacct file also
// keeps per Slurm job id what the job table's join needs.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/report/jobs/job_state.h"

namespace dtbench::report {

struct TraceJob {
  double durationS = 0;                   // run time: Σ over attempts of end − start
  double queueS = 0;                      // first start − submit
  double gpuSeconds = 0;                  // Σ over attempts of GPUs × run time
  int32_t gpus = 0;                       // the last attempt's
  JobState state = JobState::kCompleted;  // final, the last attempt's
};

struct SkippedRow {
  int64_t line = 0;
  uint32_t reason = 0;  // index into JobTrace::reasons
};

// One job as its rows describe it, before it is counted (JobTrace::add).
struct JobRecord {
  int64_t line = 0;      // the last attempt's line
  std::string rawState;  // the last attempt's, as written
  JobState state = JobState::kUnknown;
  int32_t gpus = 0;
  double submitS = std::nan(""), startS = std::nan(""), endS = std::nan("");  // NaN: none
  double durationS = 0, gpuSeconds = 0;
  int64_t attempts = 1;
};

// Per Slurm job id of a sacct file: the join of the job table (slurm_join.h).
struct SlurmJob {
  double submitS = std::nan("");  // the first attempt's
  double startS = std::nan("");   // the first start of any attempt
  double endS = std::nan("");     // the last attempt's
  int64_t attempts = 0;
  std::string state;  // the last attempt's: COMPLETED, FAILED, CANCELLED, or its own word (RUNNING, REQUEUED, ...)
};

struct JobTrace {
  std::string path;        // as named on the command line: the trace's name in every table
  std::string kind;        // "sacct" or "trace"
  int64_t rows = 0;        // data rows read
  int64_t attempts = 0;    // rows that are attempts of the counted jobs
  int64_t jobs = 0;        // ended jobs that started: GPU jobs and jobs without GPUs
  int64_t unfinished = 0;  // jobs not ended (running, pending, requeued last)
  std::vector<TraceJob> gpuJobs;
  std::vector<SkippedRow> skipped;
  std::vector<std::string> reasons;
  double firstSubmitS = std::nan(""), lastEndS = std::nan("");  // over gpuJobs
  std::map<std::string, SlurmJob> slurmJobs;                    // sacct only

  // Counts `job`: a GPU job with a final state that started joins gpuJobs; any other is listed in
  // `skipped` with the reason (not ended, not started, unknown state, no GPUs, started before
  // its submit).
  void add(const JobRecord& job);
  void skip(int64_t line, const std::string& reason);

 private:
  std::unordered_map<std::string, uint32_t> reasonIndex_;
};

}  // namespace dtbench::report
