#pragma once
// SweepRunner: runs the points of `dtbench sweep` one after another on this machine
// (docs/sweep.md), each as a child `dtbench train` (world 1) or `dtbench launch -n N -- dtbench
// train` (world N > 1) with `--out DIR/<name>`.
//
// Contract:
//  - A point whose DIR/<name>/summary.json says `completed` is skipped. A DIR/<name> in any other
//    state (failed, interrupted, running with no sweep alive, empty) is renamed to the first free
//    DIR/<name>.attempt-K and the point runs again; nothing is ever deleted. Attempt numbers count
//    the kept attempts: the run in DIR/<name> after K renamed ones is attempt K + 1.
//  - The runner creates DIR/<name> before starting the child, so every attempt leaves a directory.
//    The child's stdout and stderr are appended to DIR/<name>.log after a header line naming the
//    attempt and the command; stdin is /dev/null.
//  - A point completes when its child exits 0 and summary.json says `completed`. A failed attempt
//    is retried up to `retries` more times.
//  - While the runner exists, SIGINT and SIGTERM are blocked and read from a signalfd (Note
//    [Signals without globals] in launch_supervisor.cpp): one that arrives during a point is
//    forwarded to the child's process group (dtbench launch forwards it to its ranks), the point
//    ends `interrupted` and is not retried; stopSignal() then says which signal came and the
//    caller runs no further point. The child is also sent SIGTERM if this process dies
//    (PR_SET_PDEATHSIG), so no child outlives the sweep.
//  - One sweep at a time per DIR: the constructor takes an exclusive lock on DIR/.sweep.lock and
//    throws std::runtime_error naming DIR when another sweep holds it.

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_grid.h"

namespace dtbench::sweep {

struct SweepSettings {
  std::string outDir;
  std::vector<std::string> trainFlags;  // the words after `--`, given to every point
  int retries = 1;
  std::string executable;  // the dtbench binary
};

struct PointOutcome {
  std::string name;
  std::string path;  // DIR/<name>
  int worldSize = 1;
  std::string configuration;  // "batch=32 world=2"
  std::string state;          // completed | skipped | failed | interrupted
  int attempt = 0;            // number of the last attempt (see the contract)
  int attemptsRun = 0;        // attempts started by this sweep
  double startedAt = 0;       // Unix seconds, last attempt
  double seconds = 0;         // wall-clock seconds of the last attempt
  int exitCode = 0;
  std::string error;  // failed or interrupted: what went wrong, from summary.json or the log
};

// The command line of one point's child process.
std::vector<std::string> pointCommand(const GridPoint& point, const SweepSettings& settings);

// The state of a point's directory: "" when it does not exist, summary.json's status, or
// "unknown" without a readable one.
std::string directoryState(const std::string& runDirectory);

class SweepRunner {
 public:
  explicit SweepRunner(SweepSettings settings);
  ~SweepRunner();
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  // Runs (or skips) one point; prints one line per finished attempt to `progress`.
  PointOutcome run(const GridPoint& point, std::FILE* progress);

  // SIGINT or SIGTERM when one arrived (during a point or between points), else 0.
  int stopSignal();

 private:
  void readSignals(pid_t child);

  SweepSettings settings_;
  sigset_t oldMask_;
  int signalFd_ = -1;
  int lockFd_ = -1;
  int stopSignal_ = 0;
};

}  // namespace dtbench::sweep
