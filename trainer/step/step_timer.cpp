#include "trainer/step/step_timer.h"

#include <torch/cuda.h>

#include <limits>
#include <ratio>
#include <stdexcept>

namespace dtbench::trainer {

void fillPhases(run::StepRecord& record, PhaseEvents& events, const std::vector<DeferredPhase>& phases) {
  for (const DeferredPhase& p : phases) record.*(p.column) = events.secondsBetween(p.from, p.to);
}

StepTimer::StepTimer(c10::Device device, run::PhaseTiming timing, PhaseEvents* events, run::StepRecord& record,
                     const TraceClock& clock, std::vector<TraceEvent>* trace)
    : timing_(timing),
      syncDevice_(device.is_cuda() && timing == run::PhaseTiming::kSync),
      events_(events),
      record_(record),
      clock_(clock),
      trace_(trace) {
  if (timing_ == run::PhaseTiming::kEvents && events_ == nullptr)
    throw std::invalid_argument("StepTimer: --phase-timing events needs a PhaseEvents");
  start_ = last_ = now(/*deviceTime=*/false);
}

StepTimer::TimePoint StepTimer::now(bool deviceTime) const {
  if (deviceTime && syncDevice_) torch::cuda::synchronize();
  return std::chrono::steady_clock::now();
}

StepTimer::TimePoint StepTimer::end(const char* name, double run::StepRecord::*column) {
  const bool hostPhase = ended_ == 0;  // the wait for data
  const TimePoint t = now(!hostPhase);
  if (column != nullptr) {
    if (hostPhase || timing_ == run::PhaseTiming::kSync)
      record_.*column = std::chrono::duration<double>(t - last_).count();
    else
      record_.*column = std::numeric_limits<double>::quiet_NaN();  // `none`, or `events` until filled
    if (!hostPhase && timing_ == run::PhaseTiming::kEvents) deferred_.push_back({column, ended_ - 1, ended_});
  }
  if (timing_ == run::PhaseTiming::kEvents) events_->mark(ended_);
  ++ended_;
  last_ = t;
  if (trace_ != nullptr) {
    // --phase-timing none leaves the device phases untimed in batches.csv, and the trace says no more:
    // consecutive untimed phases are one span of compute.
    const bool untimed = timing_ == run::PhaseTiming::kNone && column != nullptr && !hostPhase;
    if (untimed && lastUntimed_)
      ends_.back().second = t;
    else
      ends_.emplace_back(untimed ? "compute (phases not timed)" : name, t);
    lastUntimed_ = untimed;
  }
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
