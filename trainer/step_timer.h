#pragma once
// StepTimer: times the consecutive phases of one training step (docs/design.md, "The step"), and
// with one call per phase fills both the step's StepRecord and, with --timeline, its trace events.
//
//   StepTimer timer(device, record, clock, trace);   // the step starts: data_s counts from here
//   ... wait for the batch ...   timer.end("data", &StepRecord::dataS);
//   ... forward ...              timer.end("forward", &StepRecord::forwardS);
//   ... a phase with no column of its own (the end of synchronization) ...  timer.end("sync");
//   timer.finish();  // step_s = from the start to now; the trace gets one event per phase
//
// Each phase runs from the previous end() (or the start) to its own end(). On a CUDA device the
// timer first waits for the device, so a phase's time is the time its kernels took, not the time it
// took to queue them (CUDA-event timing, which avoids that wait, belongs to the GPU path). Trace
// events are appended by finish(), in phase order, on the compute lane, with the record's rank,
// epoch and step; without a trace (nullptr) nothing is recorded but the record's columns.

#include <chrono>
#include <utility>
#include <vector>

#include <c10/core/Device.h>

#include "trainer/chrome_trace.h"
#include "trainer/step_record.h"

namespace dtbench::trainer {

class StepTimer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  StepTimer(c10::Device device, StepRecord& record, const TraceClock& clock, std::vector<TraceEvent>* trace);

  // Ends the current phase: its seconds go to `column` (when given), and it becomes a trace event
  // named `name`. Returns the moment it ended, which starts the next phase.
  TimePoint end(const char* name, double StepRecord::*column = nullptr);

  // The moment the current phase began (the previous end, or the start).
  TimePoint last() const { return last_; }

  // step_s = the start to now (read without waiting for the device); appends the trace events.
  void finish();

 private:
  TimePoint now() const;

  bool syncDevice_;
  StepRecord& record_;
  const TraceClock& clock_;
  std::vector<TraceEvent>* trace_;
  TimePoint start_;
  TimePoint last_;
  std::vector<std::pair<const char*, TimePoint>> ends_;
};

}  // namespace dtbench::trainer
