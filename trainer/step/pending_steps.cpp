#include "trainer/step/pending_steps.h"

#include <exception>
#include <utility>

namespace dtbench::trainer {

PendingStep PendingSteps::complete(PendingStep step) {
  if (step.events) {
    fillPhases(step.record, *step.events, step.phases);
    if (source_) source_->release(std::move(step.events));
    step.events.reset();
  }
  return step;
}

void PendingSteps::add(PendingStep step) {
  if (steps_.size() >= kMaxPending) {
    PendingStep& oldest = steps_.front();
    if (oldest.events) oldest.events->waitPassed();
  }
  steps_.push_back(std::move(step));
}

std::vector<PendingStep> PendingSteps::takePassed() {
  std::vector<PendingStep> out;
  while (!steps_.empty() && (!steps_.front().events || steps_.front().events->passed())) {
    out.push_back(complete(std::move(steps_.front())));
    steps_.pop_front();
  }
  return out;
}

std::vector<PendingStep> PendingSteps::takeAll() {
  std::vector<PendingStep> out;
  while (!steps_.empty()) {
    if (steps_.front().events) steps_.front().events->waitPassed();
    out.push_back(complete(std::move(steps_.front())));
    steps_.pop_front();
  }
  return out;
}

std::vector<PendingStep> PendingSteps::takeAllAfterFailure() {
  std::vector<PendingStep> out;
  while (!steps_.empty()) {
    PendingStep step = std::move(steps_.front());
    steps_.pop_front();
    try {
      if (step.events) step.events->waitPassed();
      step = complete(std::move(step));
    } catch (const std::exception&) {
      step.events.reset();  // columns stay NaN; the events of a failed device are not reused
    }
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace dtbench::trainer
