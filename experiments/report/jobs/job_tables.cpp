#include "experiments/report/jobs/job_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "experiments/report/jobs/job_distributions.h"

namespace dtbench::report {
namespace {

Cell shareOrEmpty(double value) { return std::isnan(value) ? Cell::empty() : Cell::ratio(value); }
Cell share(double part, double whole) { return whole > 0 ? Cell::ratio(part / whole) : Cell::empty(); }

double jobGpuHours(const JobTrace& trace) {
  double seconds = 0;
  for (const TraceJob& job : trace.gpuJobs) seconds += job.gpuSeconds;
  return seconds / 3600;
}

Table jobsTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "trace_jobs";
  table.title = "Job traces";
  table.columns = {"trace",   "kind",      "rows",         "attempts", "jobs",   "gpu_jobs", "unfinished",
                   "skipped", "gpu_hours", "first_submit", "last_end", "span_s", "span_days"};
  for (const JobTrace& t : traces) {
    const bool any = !t.gpuJobs.empty();
    const double span = t.lastEndS - t.firstSubmitS;
    table.rows.push_back({Cell::of(t.path), Cell::of(t.kind), Cell::integral(t.rows), Cell::integral(t.attempts),
                          Cell::integral(t.jobs), Cell::integral(static_cast<int64_t>(t.gpuJobs.size())),
                          Cell::integral(t.unfinished), Cell::integral(static_cast<int64_t>(t.skipped.size())),
                          Cell::rate(jobGpuHours(t)),
                          any ? Cell::integral(static_cast<int64_t>(std::llround(t.firstSubmitS))) : Cell::empty(),
                          any ? Cell::integral(static_cast<int64_t>(std::llround(t.lastEndS))) : Cell::empty(),
                          any ? Cell::seconds(span) : Cell::empty(), any ? Cell::ratio(span / 86400) : Cell::empty()});
  }
  table.notes = {
      "- `rows`: data rows read; a **job** is a Slurm job id (its attempts are rows with that id) or a trace row. "
      "`jobs`: jobs that started and ended COMPLETED, FAILED or CANCELLED, with or without GPUs; `attempts`: their "
      "rows; `gpu_jobs`: those with GPUs, the jobs of every distribution below. `unfinished`: jobs still running, "
      "pending or requeued; `skipped`: rows listed in trace_skipped (unfinished, never started, unknown state, no "
      "GPUs).",
      "- `gpu_hours` = Σ GPUs × run time / 3600 over the GPU jobs' attempts. `first_submit`, `last_end`: Unix "
      "seconds over the GPU jobs; `span_s` = last_end − first_submit."};
  return table;
}

Table durationTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "job_duration_cdf";
  table.title = "GPU job duration CDF";
  table.columns = {"trace", "duration_s", "jobs", "jobs_share", "gpu_time_share"};
  for (const JobTrace& t : traces) {
    if (t.gpuJobs.empty()) continue;
    for (const CdfPoint& p : durationCdf(t, logPoints(longestDuration(t), false)))
      table.rows.push_back({Cell::of(t.path), Cell::integral(static_cast<int64_t>(p.x)), Cell::integral(p.jobs),
                            shareOrEmpty(p.share), shareOrEmpty(p.gpuTimeShare)});
  }
  table.notes = {
      "- Over each trace's GPU jobs, at 1, 2, 5, 10, 20, 50, ... s up to the first point at or above the "
      "longest job: `jobs` with duration ≤ duration_s (a job's duration is the sum of its attempts' run "
      "times), `jobs_share` = jobs / GPU jobs, `gpu_time_share` = the GPU time of those jobs / all GPU "
      "time (GPUs × run time)."};
  return table;
}

Table queueTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "queue_delay_cdf";
  table.title = "Queueing delay CDF";
  table.columns = {"trace", "delay_s", "jobs", "jobs_share"};
  for (const JobTrace& t : traces) {
    if (t.gpuJobs.empty()) continue;
    for (const CdfPoint& p : queueDelayCdf(t, logPoints(longestQueueDelay(t), true)))
      table.rows.push_back(
          {Cell::of(t.path), Cell::integral(static_cast<int64_t>(p.x)), Cell::integral(p.jobs), shareOrEmpty(p.share)});
  }
  table.notes = {
      "- Over each trace's GPU jobs with a submit time, at 0, 1, 2, 5, 10, ... s up to the first point at "
      "or above the longest delay: `jobs` whose queueing delay (the first start − the submit of the first "
      "attempt) is ≤ delay_s, and their share."};
  return table;
}

Table finalStatesTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "final_states";
  table.title = "Final states by job size";
  table.columns = {"trace", "gpus", "state", "jobs", "jobs_share", "gpu_hours", "gpu_time_share"};
  for (const JobTrace& t : traces) {
    if (t.gpuJobs.empty()) continue;
    // [size class or kSizeClasses for all][state]
    int64_t jobs[kSizeClasses + 1][3] = {};
    double seconds[kSizeClasses + 1][3] = {};
    for (const TraceJob& job : t.gpuJobs) {
      const int s = static_cast<int>(job.state);
      for (int size : {sizeClass(job.gpus), kSizeClasses}) {
        ++jobs[size][s];
        seconds[size][s] += job.gpuSeconds;
      }
    }
    for (int size : {kSizeClasses, 0, 1, 2, 3}) {
      int64_t allJobs = 0;
      double allSeconds = 0;
      for (int s = 0; s < 3; ++s) {
        allJobs += jobs[size][s];
        allSeconds += seconds[size][s];
      }
      for (JobState state : kFinalStates) {
        const int s = static_cast<int>(state);
        table.rows.push_back({Cell::of(t.path), Cell::of(size == kSizeClasses ? "all" : sizeClassName(size)),
                              Cell::of(stateName(state)), Cell::integral(jobs[size][s]),
                              share(static_cast<double>(jobs[size][s]), static_cast<double>(allJobs)),
                              Cell::rate(seconds[size][s] / 3600), share(seconds[size][s], allSeconds)});
      }
    }
  }
  table.notes = {
      "- Over each trace's GPU jobs, by the last attempt's normalised state (docs/report.md, \"States\"; "
      "TIMEOUT counts as FAILED, PREEMPTED as CANCELLED), for all jobs and by GPUs (1, 2-4, 5-8, >8): "
      "`jobs_share` = jobs / the class's jobs, `gpu_time_share` = GPU time / the class's GPU time (GPU "
      "time of every attempt, requeued ones included); empty for a class without jobs."};
  return table;
}

Table sizeTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "gpu_time_by_size";
  table.title = "GPU time by job size";
  table.columns = {"trace", "gpus", "jobs", "gpu_hours", "gpu_time_share"};
  for (const JobTrace& t : traces) {
    if (t.gpuJobs.empty()) continue;
    int64_t jobs[kSizeClasses] = {};
    double seconds[kSizeClasses] = {}, total = 0;
    for (const TraceJob& job : t.gpuJobs) {
      ++jobs[sizeClass(job.gpus)];
      seconds[sizeClass(job.gpus)] += job.gpuSeconds;
      total += job.gpuSeconds;
    }
    for (int size = 0; size < kSizeClasses; ++size)
      table.rows.push_back({Cell::of(t.path), Cell::of(sizeClassName(size)), Cell::integral(jobs[size]),
                            Cell::rate(seconds[size] / 3600), share(seconds[size], total)});
  }
  table.notes = {
      "- Over each trace's GPU jobs by GPUs (the last attempt's): `gpu_hours` = Σ GPUs × run time / 3600, "
      "`gpu_time_share` = the class's GPU time / the trace's."};
  return table;
}

Table skippedTable(const std::vector<JobTrace>& traces) {
  Table table;
  table.name = "trace_skipped";
  table.title = "Trace rows left out of the distributions";
  table.columns = {"trace", "line", "reason"};
  for (const JobTrace& t : traces) {
    std::vector<SkippedRow> rows = t.skipped;
    std::sort(rows.begin(), rows.end(), [](const SkippedRow& a, const SkippedRow& b) { return a.line < b.line; });
    for (const SkippedRow& row : rows)
      table.rows.push_back({Cell::of(t.path), Cell::integral(row.line), Cell::of(t.reasons[row.reason])});
  }
  table.notes = {
      "- Every row that is in no distribution, with its line in the file (sacct: the job's last "
      "attempt) and why: not ended (RUNNING, PENDING, a last attempt REQUEUED), not started (ended "
      "before it started), an unknown state, 0 GPUs (counted in `jobs`), a start before its submit."};
  return table;
}

}  // namespace

std::vector<Table> traceTables(const std::vector<JobTrace>& traces) {
  return {jobsTable(traces),        durationTable(traces), queueTable(traces),
          finalStatesTable(traces), sizeTable(traces),     skippedTable(traces)};
}

}  // namespace dtbench::report
