#pragma once
// SweepSession: what every launcher of `dtbench sweep` holds while it runs (docs/sweep.md): the
// sweep's lock on its directory and its view of SIGINT and SIGTERM.
//
// Contract:
//  - One sweep at a time per DIR: the constructor creates DIR and takes an exclusive lock on
//    DIR/.sweep.lock; it throws std::runtime_error naming DIR when another sweep holds it or when
//    DIR cannot be written.
//  - While the session exists, SIGINT and SIGTERM are blocked and queued on a signalfd (Note
//    [Signals without globals] in experiments/launch/launch_supervisor.cpp); the destructor restores the old mask.
//    A child must call restoreSignalMask() after fork() so that it gets these signals again.
//  - takeSignals() returns the signals that arrived since the last call (never blocks);
//    stopSignal() is the first one that ever arrived, or 0.

#include <csignal>
#include <string>
#include <vector>

#include "common/file_lock.h"

namespace dtbench::sweep {

class SweepSession {
 public:
  explicit SweepSession(const std::string& outDir);
  ~SweepSession();
  SweepSession(const SweepSession&) = delete;
  SweepSession& operator=(const SweepSession&) = delete;

  std::vector<int> takeSignals();
  int stopSignal();

  // Waits up to `milliseconds` for a signal to arrive; true when one is queued.
  bool waitForSignal(int milliseconds);

  // In a forked child: the signal mask the process had before the session.
  void restoreSignalMask() const;

 private:
  sigset_t oldMask_;
  int signalFd_ = -1;
  common::FileLock lock_;  // <out>/.sweep.lock: one sweep per --out
  int stopSignal_ = 0;
};

}  // namespace dtbench::sweep
