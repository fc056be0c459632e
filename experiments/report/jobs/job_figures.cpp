#include "experiments/report/jobs/job_figures.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "experiments/report/jobs/job_distributions.h"

namespace dtbench::report {
namespace {

constexpr int kPointsPerDecade = 20;

nlohmann::json number(double value) { return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value); }

}  // namespace

nlohmann::json traceFigureData(const std::vector<JobTrace>& traces) {
  nlohmann::json entries = nlohmann::json::array();
  for (const JobTrace& t : traces) {
    if (t.gpuJobs.empty()) continue;
    nlohmann::json duration = {{"x_s", nlohmann::json::array()},
                               {"jobs_share", nlohmann::json::array()},
                               {"gpu_time_share", nlohmann::json::array()}};
    for (const CdfPoint& p : durationCdf(t, finePoints(longestDuration(t), kPointsPerDecade, false))) {
      duration["x_s"].push_back(p.x);
      duration["jobs_share"].push_back(number(p.share));
      duration["gpu_time_share"].push_back(number(p.gpuTimeShare));
    }
    nlohmann::json queue = {{"x_s", nlohmann::json::array()}, {"jobs_share", nlohmann::json::array()}};
    for (const CdfPoint& p : queueDelayCdf(t, finePoints(longestQueueDelay(t), kPointsPerDecade, true))) {
      queue["x_s"].push_back(p.x);
      queue["jobs_share"].push_back(number(p.share));
    }
    std::vector<int64_t> jobs[3];
    std::vector<double> hours[3];
    for (int s = 0; s < 3; ++s) {
      jobs[s].assign(kSizeClasses + 1, 0);
      hours[s].assign(kSizeClasses + 1, 0.0);
    }
    for (const TraceJob& job : t.gpuJobs) {
      const int s = static_cast<int>(job.state);
      for (int size : {0, 1 + sizeClass(job.gpus)}) {
        ++jobs[s][size];
        hours[s][size] += job.gpuSeconds / 3600;
      }
    }
    nlohmann::json states = nlohmann::json::array();
    for (JobState state : kFinalStates) {
      const int s = static_cast<int>(state);
      states.push_back({{"state", stateName(state)}, {"jobs", jobs[s]}, {"gpu_hours", hours[s]}});
    }
    nlohmann::json sizes = {"all"};
    for (int size = 0; size < kSizeClasses; ++size) sizes.push_back(sizeClassName(size));
    entries.push_back({{"name", t.path},
                       {"kind", t.kind},
                       {"duration", duration},
                       {"queue", queue},
                       {"sizes", sizes},
                       {"states", states}});
  }
  return entries;
}

}  // namespace dtbench::report
