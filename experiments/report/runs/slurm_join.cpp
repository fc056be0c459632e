#include "experiments/report/runs/slurm_join.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <set>

#include "experiments/report/runs/run_selection.h"

namespace dtbench::report {

std::string slurmJobIdOf(const RunData& run) { return run.facts.slurmJobId.value_or(""); }

const SlurmJob* findSlurmJob(const std::vector<JobTrace>& traces, const std::string& id) {
  if (id.empty()) return nullptr;
  for (const JobTrace& trace : traces) {
    auto it = trace.slurmJobs.find(id);
    if (it != trace.slurmJobs.end()) return &it->second;
  }
  return nullptr;
}

void addSlurmColumns(Table& jobs, const std::vector<RunData>& runs, const std::vector<JobTrace>& traces) {
  for (const char* c : {"slurm_job_id", "queue_wait_s", "requeues", "slurm_state"}) jobs.columns.push_back(c);
  for (size_t i = 0; i < runs.size() && i < jobs.rows.size(); ++i) {
    const std::string id = slurmJobIdOf(runs[i]);
    const SlurmJob* job = findSlurmJob(traces, id);
    std::vector<Cell>& row = jobs.rows[i];
    row.push_back(id.empty() ? Cell::empty() : Cell::of(id));
    const double wait = job ? job->startS - job->submitS : std::nan("");
    row.push_back(std::isnan(wait) ? Cell::empty() : Cell::seconds(wait));
    row.push_back(job ? Cell::integral(job->attempts - 1) : Cell::empty());
    row.push_back(job ? Cell::of(job->state) : Cell::empty());
  }
  jobs.notes.push_back(
      "- With --sacct: `slurm_job_id` from config.json, matched to sacct's JobID; `queue_wait_s` = the first start − "
      "the first attempt's submit; `requeues` = attempts − 1; `slurm_state` = the last attempt's state (COMPLETED, "
      "FAILED, CANCELLED, or sacct's word for a job not ended). Empty without a job id or a sacct row for it.");
}

void addTimeToResult(Table& cost, const std::vector<ScalingRow>& rows, const std::vector<JobTrace>& traces) {
  const auto at = std::find(cost.columns.begin(), cost.columns.end(), "gpu_hours");
  const auto column = std::distance(cost.columns.begin(), at) + 1;
  cost.columns.insert(cost.columns.begin() + column, "time_to_result_s");
  for (size_t i = 0; i < rows.size() && i < cost.rows.size(); ++i) {
    std::set<std::string> ids;
    bool all = true;
    for (const UsableRun* r : rows[i].repeats) {
      const std::string id = slurmJobIdOf(*r->run);
      const SlurmJob* job = findSlurmJob(traces, id);
      all = all && job != nullptr && !std::isnan(job->endS);
      ids.insert(id);
    }
    double first = std::nan(""), last = std::nan("");
    for (const std::string& id : ids) {
      const SlurmJob* job = findSlurmJob(traces, id);
      if (!job) continue;
      if (!std::isnan(job->submitS) && !(job->submitS >= first)) first = job->submitS;
      if (!std::isnan(job->endS) && !(job->endS <= last)) last = job->endS;
    }
    const double span = last - first;
    cost.rows[i].insert(cost.rows[i].begin() + column,
                        all && std::isfinite(span) ? Cell::seconds(span) : Cell::empty());
  }
  cost.notes.push_back(
      "- With --sacct: `time_to_result_s` = from the submit of the first Slurm job of the row's runs "
      "(repeats included) to the end of the last (sacct's Submit and End): queueing, requeues and "
      "start-up included. Empty unless every run has a slurm_job_id that sacct lists, with an End.");
}

}  // namespace dtbench::report
