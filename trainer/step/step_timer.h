#pragma once
// StepTimer: times the consecutive phases of one training step (docs/design.md, "The step"), and
// with one call per phase fills both the step's StepRecord and, with --timeline, its trace events.
//
//   StepTimer timer(device, timing, events, record, clock, trace);  // the step starts: data_s counts from here
//   ... wait for the batch ...   timer.end("data", &StepRecord::dataS);
//   ... forward ...              timer.end("forward", &StepRecord::forwardS);
//   ... a phase with no column of its own (the end of synchronization) ...  timer.end("sync");
//   timer.finish();  // step_s = from the start to now; the trace gets one event per phase
//
// Each phase runs from the previous end() (or the start) to its own end(). The first phase (the
// wait for data) is the host's own and always read on the host clock. The others, by --phase-timing:
//   sync    on a CUDA device the timer waits for the device at each end(), so a phase's time is the
//           time its kernels took, not the time it took to queue them (one synchronization per phase);
//   events  each end() marks the device's timeline (trainer/step/phase_events.h) and the column is filled
//           later, from the marks, once the device has passed them (deferredPhases(), fillPhases():
//           trainer/step/pending_steps.h); nothing waits;
//   none    the columns are left unmeasured (NaN: empty cells in batches.csv).
// step_s is the host's, from the start to finish(), in every mode. Trace events are appended by
// finish(), in phase order, on the compute lane, with the record's rank, epoch and step, on the host
// clock: under `events` and `none` they show when the host queued each phase. Without a trace
// (nullptr) nothing is recorded but the record's columns.

#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

#include <c10/core/Device.h>

#include "run/settings.h"
#include "run/step_record.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/phase_events.h"

namespace dtbench::trainer {

// A column to fill from two marks of the step's PhaseEvents.
struct DeferredPhase {
  double run::StepRecord::*column;
  size_t from;
  size_t to;
};

// Fills each column from the marks; the marks must have been passed (PhaseEvents::passed()).
void fillPhases(run::StepRecord& record, PhaseEvents& events, const std::vector<DeferredPhase>& phases);

class StepTimer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // `events` receives the marks under run::PhaseTiming::kEvents (it must then not be null); it is
  // ignored otherwise.
  StepTimer(c10::Device device, run::PhaseTiming timing, PhaseEvents* events, run::StepRecord& record,
            const TraceClock& clock, std::vector<TraceEvent>* trace);

  // Ends the current phase: its seconds go to `column` (when given; under `events` later, under
  // `none` never), and it becomes a trace event named `name`. Returns the host's moment it ended,
  // which starts the next phase.
  TimePoint end(const char* name, double run::StepRecord::*column = nullptr);

  // The host's moment the current phase began (the previous end, or the start).
  TimePoint last() const { return last_; }

  // step_s = the start to now (read without waiting for the device); appends the trace events.
  void finish();

  // Under `events`: the columns still to fill from the marks.
  const std::vector<DeferredPhase>& deferredPhases() const { return deferred_; }

 private:
  TimePoint now(bool deviceTime) const;

  run::PhaseTiming timing_;
  bool syncDevice_;
  PhaseEvents* events_;
  run::StepRecord& record_;
  const TraceClock& clock_;
  std::vector<TraceEvent>* trace_;
  TimePoint start_;
  TimePoint last_;
  size_t ended_ = 0;  // phases ended so far; under `events`, mark k is the end of phase k
  std::vector<std::pair<const char*, TimePoint>> ends_;
  bool lastUntimed_ = false;  // ends_.back() is a span of untimed phases (--phase-timing none)
  std::vector<DeferredPhase> deferred_;
};

}  // namespace dtbench::trainer
