#pragma once
// StopSignalHandler: turns SIGTERM (Slurm's "you are about to be preempted") and SIGINT (Ctrl-C)
// into a flag the training loop polls at step boundaries (docs/design.md, "Signals, failures and
// resume"). The handler does nothing but store the signal's number, so it is async-signal-safe
// and the loop decides when and how to stop; no signal kills the process while a handler is
// installed.
//
// Contract:
// - The constructor installs the handler for SIGTERM and SIGINT (sigaction with SA_RESTART, so
//   interrupted system calls resume) and starts with the flag clear; the destructor puts the
//   previous dispositions back, whatever they were.
// - Signal dispositions belong to the process, so the flag is process-wide: a signal delivered to
//   any thread sets it, and at most one StopSignalHandler may exist at a time (constructing a
//   second while one is alive throws std::logic_error).
// - signalNumber() is the first signal received since construction or the last clear(); later
//   ones leave it unchanged. requested() is signalNumber() != 0.
// - Every rank has its own flag; agreeing across ranks on when to stop is the caller's job.
//
// Note [The stop flag is a lock-free atomic]
// A handler may run on any thread, and `volatile std::sig_atomic_t` is race-free only within the
// thread the signal interrupted. A lock-free std::atomic<int> is both async-signal-safe and safe
// to read from the training thread ([support.signal]); a static_assert in stop_signal.cpp keeps it
// lock-free.

#include <signal.h>  // struct sigaction (POSIX)

namespace dtbench::trainer {

class StopSignalHandler {
 public:
  StopSignalHandler();
  ~StopSignalHandler();
  StopSignalHandler(const StopSignalHandler&) = delete;
  StopSignalHandler& operator=(const StopSignalHandler&) = delete;

  bool requested() const { return signalNumber() != 0; }
  int signalNumber() const;  // SIGTERM, SIGINT, or 0 when none arrived
  void clear();

 private:
  struct sigaction previousTerm_ {};
  struct sigaction previousInt_ {};
};

// The live handler's flag, for code that holds no reference to it (an injected hold in comm/, through
// comm::HoldBounds): requested() of the handler alive now, false when none is.
bool stopSignalRequested();

}  // namespace dtbench::trainer
