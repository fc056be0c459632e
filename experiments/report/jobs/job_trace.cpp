#include "experiments/report/jobs/job_trace.h"

#include <algorithm>

namespace dtbench::report {

void JobTrace::skip(int64_t line, const std::string& reason) {
  auto it = reasonIndex_.find(reason);
  if (it == reasonIndex_.end()) {
    it = reasonIndex_.emplace(reason, static_cast<uint32_t>(reasons.size())).first;
    reasons.push_back(reason);
  }
  skipped.push_back({line, it->second});
}

void JobTrace::add(const JobRecord& job) {
  if (job.state == JobState::kUnknown) return skip(job.line, "unknown state '" + job.rawState + "'");
  if (!isFinal(job.state)) {
    ++unfinished;
    return skip(job.line, "not ended (" + job.rawState + ")");
  }
  if (std::isnan(job.startS)) return skip(job.line, "not started (" + job.rawState + " before it started)");
  if (!std::isnan(job.submitS) && job.startS < job.submitS) return skip(job.line, "starts before its submit time");
  ++jobs;
  attempts += job.attempts;
  if (job.gpus == 0) return skip(job.line, "0 GPUs (the distributions are of GPU jobs)");
  TraceJob t;
  t.durationS = job.durationS;
  t.queueS = std::isnan(job.submitS) ? std::nan("") : job.startS - job.submitS;
  t.gpuSeconds = job.gpuSeconds;
  t.gpus = job.gpus;
  t.state = job.state;
  gpuJobs.push_back(t);
  const double submit = std::isnan(job.submitS) ? job.startS : job.submitS;
  const double end = std::isnan(job.endS) ? job.startS + job.durationS : job.endS;
  if (std::isnan(firstSubmitS) || submit < firstSubmitS) firstSubmitS = submit;
  if (std::isnan(lastEndS) || end > lastEndS) lastEndS = end;
}

}  // namespace dtbench::report
