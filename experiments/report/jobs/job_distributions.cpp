#include "experiments/report/jobs/job_distributions.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace dtbench::report {
namespace {

std::vector<CdfPoint> cdf(std::vector<std::pair<double, double>> values, const std::vector<double>& points) {
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const auto& v : values) total += v.second;
  std::vector<CdfPoint> result;
  size_t i = 0;
  double weight = 0;
  for (double x : points) {
    while (i < values.size() && values[i].first <= x) weight += values[i++].second;
    CdfPoint p;
    p.x = x;
    p.jobs = static_cast<int64_t>(i);
    p.share = values.empty() ? std::nan("") : static_cast<double>(i) / static_cast<double>(values.size());
    p.gpuTimeShare = total > 0 ? weight / total : std::nan("");
    result.push_back(p);
  }
  return result;
}

}  // namespace

std::vector<double> logPoints(double max, bool withZero) {
  std::vector<double> points;
  if (withZero) points.push_back(0);
  static const double kSteps[] = {1, 2, 5};
  for (double decade = 1;; decade *= 10)
    for (double step : kSteps) {
      points.push_back(step * decade);
      if (step * decade >= max) return points;
    }
}

std::vector<double> finePoints(double max, int perDecade, bool withZero) {
  std::vector<double> points;
  if (withZero) points.push_back(0);
  for (int i = 0;; ++i) {
    const double x = std::pow(10.0, static_cast<double>(i) / perDecade);
    points.push_back(x);
    if (x >= max) return points;
  }
}

std::vector<CdfPoint> durationCdf(const JobTrace& trace, const std::vector<double>& points) {
  std::vector<std::pair<double, double>> values;
  values.reserve(trace.gpuJobs.size());
  for (const TraceJob& job : trace.gpuJobs) values.emplace_back(job.durationS, job.gpuSeconds);
  return cdf(std::move(values), points);
}

std::vector<CdfPoint> queueDelayCdf(const JobTrace& trace, const std::vector<double>& points) {
  std::vector<std::pair<double, double>> values;
  values.reserve(trace.gpuJobs.size());
  for (const TraceJob& job : trace.gpuJobs)
    if (!std::isnan(job.queueS)) values.emplace_back(job.queueS, job.gpuSeconds);
  return cdf(std::move(values), points);
}

double longestDuration(const JobTrace& trace) {
  double longest = 0;
  for (const TraceJob& job : trace.gpuJobs) longest = std::max(longest, job.durationS);
  return longest;
}

double longestQueueDelay(const JobTrace& trace) {
  double longest = 0;
  for (const TraceJob& job : trace.gpuJobs)
    if (!std::isnan(job.queueS)) longest = std::max(longest, job.queueS);
  return longest;
}

int sizeClass(int32_t gpus) { return gpus <= 1 ? 0 : gpus <= 4 ? 1 : gpus <= 8 ? 2 : 3; }

const char* sizeClassName(int size) {
  static const char* const kNames[] = {"1", "2-4", "5-8", ">8"};
  return kNames[size];
}

}  // namespace dtbench::report
