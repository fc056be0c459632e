#pragma once
// PhaseEvents: marks on the device's timeline at a step's phase boundaries, read back later, so that
// timing a phase never makes the host wait for the device (as c10d's reducer times its phases).
//
//   PhaseEventSource& source = ...;                 // cudaPhaseEvents(device) or hostClockEvents()
//   std::unique_ptr<PhaseEvents> e = source.acquire();
//   e->mark(0); ... forward queued ... e->mark(1);  // on the stream that does the work
//   ... later, when e->passed() (never waits) or after e->waitPassed():
//   double forward = e->secondsBetween(0, 1);      // the device's time between the two marks
//   source.release(std::move(e));                   // reused: no allocation per step
//
// On a CUDA device a mark is a timing CUDA event recorded on the current stream, and the seconds
// between two marks are the time the stream took from one to the other: the phase's kernels, and
// any gap where the stream waited for the host to queue more. On the CPU every operation has
// finished when it returns, so a mark is the host's steady clock and is passed at once: there
// `events` measures what `sync` does, without a synchronization that would be a no-op anyway.

#include <cstddef>
#include <memory>

#include <c10/core/Device.h>

namespace dtbench::trainer {

class PhaseEvents {
 public:
  virtual ~PhaseEvents() = default;
  // Marks boundary `index` (0, 1, 2, ... in order; at most kMaxMarks) of the work queued so far.
  virtual void mark(size_t index) = 0;
  // True when the device has passed every mark made; never waits.
  virtual bool passed() = 0;
  // Waits until passed().
  virtual void waitPassed() = 0;
  // Seconds from mark `from` to mark `to` (from < to, both made and passed).
  virtual double secondsBetween(size_t from, size_t to) = 0;

  static constexpr size_t kMaxMarks = 8;
};

class PhaseEventSource {
 public:
  virtual ~PhaseEventSource() = default;
  // A set of marks with none made yet (a released one when there is one).
  virtual std::unique_ptr<PhaseEvents> acquire() = 0;
  // Gives a set back for reuse once its seconds have been read.
  virtual void release(std::unique_ptr<PhaseEvents> events) = 0;
};

// Marks read on the host's steady clock: for the CPU, where a mark is passed when it is made.
std::unique_ptr<PhaseEventSource> hostClockEvents();

// Timing CUDA events on `device`'s current stream (trainer/step/cuda_phase_events.cpp). Needs a CUDA
// device; throws std::invalid_argument otherwise.
std::unique_ptr<PhaseEventSource> cudaPhaseEvents(c10::Device device);

// The source for a run on `device`: CUDA events on a GPU, the host clock on the CPU.
std::unique_ptr<PhaseEventSource> phaseEventsFor(c10::Device device);

}  // namespace dtbench::trainer
