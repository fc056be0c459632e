#include "trainer/step_timer.h"

#include <torch/cuda.h>

#include <ratio>

namespace dtbench::trainer {

StepTimer::StepTimer(c10::Device device, StepRecord& record, const TraceClock& clock, std::vector<TraceEvent>* trace)
    : syncDevice_(device.is_cuda()), record_(record), clock_(clock), trace_(trace) {
  start_ = last_ = now();
}

StepTimer::TimePoint StepTimer::now() const {
  if (syncDevice_) torch::cuda::synchronize();
  return std::chrono::steady_clock::now();
}

StepTimer::TimePoint StepTimer::end(const char* name, double StepRecord::*column) {
  const TimePoint t = now();
  if (column != nullptr) record_.*column = std::chrono::duration<double>(t - last_).count();
  last_ = t;
  if (trace_ != nullptr) ends_.emplace_back(name, t);
  return t;
}

void StepTimer::finish() {
  record_.stepS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (trace_ == nullptr) return;
  TimePoint from = start_;
  for (const auto& [name, until] : ends_) {
    trace_->push_back({name,
                       "step",
                       static_cast<int>(record_.rank),
                       kComputeLane,
                       clock_.us(from),
                       std::chrono::duration<double, std::micro>(until - from).count(),
                       {{"epoch", record_.epoch}, {"step", record_.step}}});
    from = until;
  }
}

}  // namespace dtbench::trainer
