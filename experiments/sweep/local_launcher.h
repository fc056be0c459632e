#pragma once
// LocalLauncher: `dtbench sweep --launcher local` (docs/sweep.md) runs the points one after another
// on this machine, each as a child `dtbench train` (world 1) or `dtbench launch -n N -- dtbench
// train` (world N > 1) with `--out DIR/<name>`. A nodes axis may only say 1 here (then N is
// --ranks-per-node): one machine cannot place ranks on several nodes. A --mode dp point is one
// `dtbench train` that sees as many GPUs as its world (CUDA_VISIBLE_DEVICES, pointEnvironment).
//
// Contract (beyond SweepRunner's and point_attempts.h's):
//  - A DIR/<name> in any state other than completed (failed, interrupted, running with no sweep
//    alive, empty) is moved aside and the point runs again.
//  - The launcher creates DIR/<name> before starting the child, so every attempt leaves a
//    directory. The child's stdout and stderr are appended to DIR/<name>.log after the attempt's
//    header; stdin is /dev/null.
//  - A point completes when its child exits 0 and summary.json says `completed`.
//  - A child that ended by SIGKILL (exit code 137, dtbench launch's for a rank so killed) while this
//    cgroup's out-of-memory kill count rose (out_of_memory.h; SweepSettings::memoryEvents) was ended
//    by the kernel's out-of-memory killer: the point fails at once, "failed (out of memory)", with
//    what to change; another SIGKILL is a failure that may pass and is retried.
//  - SIGINT or SIGTERM during a point is forwarded to the child's process group (dtbench launch
//    forwards it to its ranks); the point ends `interrupted`, is not retried, and no further point
//    starts. The child is also sent SIGTERM if this process dies (PR_SET_PDEATHSIG).
//  - The constructor takes the SweepSession (throws when another sweep runs in DIR).

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_runner.h"
#include "experiments/sweep/sweep_session.h"

namespace dtbench::sweep {

// The command line of one point's child process. A point on several nodes (GridPoint::nodes > 1) is
// refused with std::invalid_argument: the sweep checks the grid first (checkLocalPlacement).
std::vector<std::string> pointCommand(const GridPoint& point, const SweepSettings& settings);

// The variables a point's child gets beside this process's own: for a --mode dp point of N GPUs
// (GridPoint::processGpus), CUDA_VISIBLE_DEVICES with N devices, the first N of this process's
// CUDA_VISIBLE_DEVICES when it is set, else 0,...,N-1; none for other points. Throws
// common::UsageError when this process's CUDA_VISIBLE_DEVICES names fewer than N devices.
std::vector<std::pair<std::string, std::string>> pointEnvironment(const GridPoint& point);

class LocalLauncher : public SweepRunner {
 public:
  explicit LocalLauncher(SweepSettings settings);

  std::vector<PointOutcome> run(const std::vector<GridPoint>& points, std::FILE* progress) override;
  int stopSignal() override;

 private:
  PointOutcome runPoint(const GridPoint& point, std::FILE* progress);
  void forwardSignals(pid_t child);

  SweepSettings settings_;
  SweepSession session_;
  std::string memoryEvents_;  // the file with this cgroup's oom_kill counter; "" when there is none
};

}  // namespace dtbench::sweep
