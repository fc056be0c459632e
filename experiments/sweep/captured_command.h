#pragma once
// CapturedCommand: runs a short client command (sbatch, squeue, scancel, scontrol) to its end and
// returns its exit code and output, for the Slurm launcher.
//
// Contract:
//  - argv[0] is looked up in PATH (execvp). `environment` is added to (or replaces in) this
//    process's environment for the child only. stdin is /dev/null; stdout and stderr are captured
//    separately, in full.
//  - The child runs in a process group of its own, so a terminal's Ctrl-C reaches the sweep (which
//    then cancels its jobs) but never kills an sbatch half-way through a submission; it gets the
//    signal mask the process had before the SweepSession.
//  - A command that cannot be started exits 127 with the reason on its stderr.

#include <string>
#include <utility>
#include <vector>

#include "experiments/sweep/sweep_session.h"

namespace dtbench::sweep {

struct CommandResult {
  int exitCode = 0;  // 128 + N when killed by signal N
  std::string out;
  std::string err;
};

CommandResult runCaptured(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& environment,
                          const SweepSession& session);

// The full path of an executable `name` found in PATH, or "" when there is none.
std::string findInPath(const std::string& name);

}  // namespace dtbench::sweep
