#pragma once
// PendingSteps: the steps whose phase columns wait for the device (--phase-timing events,
// trainer/step/step_timer.h). A step goes in when it ends, with its PhaseEvents; it comes out, its columns
// filled from the marks, once the device has passed them: at a later step (takePassed(), which never
// waits) or when the rows must reach the disk (takeAll(): the end of an epoch, a checkpoint, an agreed
// stop, a failure). Steps come out in the order they went in, so batches.csv's rows keep their order.
//
// The ring is small: with more than kMaxPending steps waiting, add() waits for the oldest. With a
// step that reads its loss back (a host synchronization on the stream that did the work) every mark
// has been passed when the next step starts, and nothing waits at all.
//
// After a failure the device may be unusable: takeAllAfterFailure() leaves the columns of a step
// whose marks cannot be read empty (NaN) instead of throwing, so the rows still reach the disk.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "trainer/step/phase_events.h"
#include "run/step_record.h"
#include "trainer/step/step_timer.h"

namespace dtbench::trainer {

struct PendingStep {
  run::StepRecord record;
  int64_t globalStep = 0;
  std::vector<double> readyS;             // when each gradient became ready (trainer/step/gradient_ready.h)
  std::unique_ptr<PhaseEvents> events;    // null: nothing to fill
  std::vector<DeferredPhase> phases;
};

class PendingSteps {
 public:
  static constexpr size_t kMaxPending = 4;

  // `source` takes the events back once read; it outlives this object (null when no step has events).
  explicit PendingSteps(PhaseEventSource* source) : source_(source) {}

  void add(PendingStep step);
  // The oldest steps whose marks the device has passed, up to the first that it has not.
  std::vector<PendingStep> takePassed();
  // Every step, waiting for the device.
  std::vector<PendingStep> takeAll();
  // Every step; columns whose marks cannot be read are left NaN.
  std::vector<PendingStep> takeAllAfterFailure();

  size_t size() const { return steps_.size(); }

 private:
  PendingStep complete(PendingStep step);

  PhaseEventSource* source_;
  std::deque<PendingStep> steps_;
};

}  // namespace dtbench::trainer
