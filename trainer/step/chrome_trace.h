#pragma once
// Chrome trace of a run (--timeline): every rank's step phases and communication buckets in one
// timeline.json that chrome://tracing and Perfetto open (docs/run-directory.md).
//
// Contract:
// - A TraceEvent is one interval on one rank: its lane is kComputeLane for the training thread's
//   phases (data, h2d, forward, backward, optimizer) and kCommunicationLane for collectives
//   (one event per bucket). Times are microseconds on a clock all ranks share (e.g. Unix time).
// - Each rank collects its own events; encodeTraceEvents turns them into compact text that rides
//   to rank 0 over the communicator, and decodeTraceEvents gives back exactly the same events
//   (doubles round-trip bit for bit). Malformed text throws std::invalid_argument.
// - writeChromeTrace writes {"traceEvents": [...], "displayTimeUnit": "ms"} through a temporary
//   file and a rename: first "M" metadata events naming each rank's process "rank N" (sorted by
//   rank) and its lanes "compute" / "communication", then one "X" (complete) event per
//   TraceEvent with pid = rank, tid = lane, ts and dur in microseconds, cat = category and the
//   event's args when it has any. One event per line, so the file also reads well in a text editor.

#include <chrono>
#include <ratio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::trainer {

inline constexpr int kComputeLane = 0;
inline constexpr int kCommunicationLane = 1;

struct TraceEvent {
  std::string name;
  std::string category;
  int rank = 0;
  int lane = kComputeLane;
  double startUs = 0;
  double durationUs = 0;
  nlohmann::json args;  // null when the event has none
};

// The clock of trace events: steady-clock time points (what the step measures with) as Unix
// microseconds, the clock all ranks share. The offset between the two clocks is read once, when
// the TraceClock is made, so that the events of one rank never jump against each other.
class TraceClock {
 public:
  TraceClock();
  double us(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count() + unixMinusSteadyUs_;
  }

 private:
  double unixMinusSteadyUs_;
};

std::string encodeTraceEvents(const std::vector<TraceEvent>& events);

std::vector<TraceEvent> decodeTraceEvents(const std::string& text);

// Throws std::runtime_error saying what to do when the file cannot be written.
void writeChromeTrace(const std::string& path, const std::vector<TraceEvent>& events);

}  // namespace dtbench::trainer
