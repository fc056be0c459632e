#pragma once
// SweepRunner: what a launcher of `dtbench sweep` does with the points of a grid (docs/sweep.md).
// LocalLauncher (local_launcher.h) runs them one after another on this machine; SlurmLauncher
// (slurm_launcher.h) submits them as Slurm jobs and waits for them. Both follow the same rules for
// a point's run directory and its attempts (point_attempts.h) and hold a SweepSession (the lock on
// DIR, SIGINT and SIGTERM) while they run.
//
// Contract of run():
//  - A point whose DIR/<name>/summary.json says its run is complete (run/run_outcome.h) is skipped,
//    never run again.
//  - Every other point is run with `--out DIR/<name>`; a failed attempt is moved aside to
//    DIR/<name>.attempt-K and run again, up to `retries` more times, unless it failed in a way
//    another attempt would repeat (unchangingFailure, point_attempts.h: a usage error, a data
//    error, an out-of-memory kill): then the point fails at once.
//  - It returns one outcome per point it got to, in the order of `points`; after SIGINT or SIGTERM
//    (stopSignal() != 0) the points it did not get to are left out.
//  - One line per finished attempt goes to `progress`.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_grid.h"
#include "run/run_outcome.h"

namespace dtbench::sweep {

// What only the Slurm launcher reads (slurm_launcher.h).
struct SlurmSettings {
  std::string script;                   // --slurm-script; empty: train_cpu.sbatch or train_gpus.sbatch
  std::string scriptDirectory;          // where the default scripts are: the repository's slurm/
  std::vector<std::string> sbatchArgs;  // --sbatch-args, split into words
  double timeoutSeconds = 0;            // --slurm-timeout; 0: wait as long as the jobs take
  std::string gpuType;                  // --gpu-type: --gres=gpu:TYPE:N for the GPU points; "" any type
  std::string constraint;               // --constraint: sbatch --constraint=C for every point; "" none
  bool allowOverlap = false;            // --allow-overlap: points that share one machine may run together
  int minNodes = 0;                     // --min-nodes: a point on M nodes asks for --nodes=min(MIN,M)-M; 0: M
};

struct SweepSettings {
  std::string outDir;
  std::vector<std::string> trainFlags;  // the words after `--`, given to every point
  int retries = 1;
  std::string executable;  // the dtbench binary
  SlurmSettings slurm;
  // The file with this cgroup's "oom_kill" counter (out_of_memory.h); nullopt: this process's own.
  std::optional<std::string> memoryEvents;
};

struct PointOutcome {
  std::string name;
  std::string path;  // DIR/<name>
  int worldSize = 1;
  std::string configuration;  // "batch=32 world=2"
  // How the point's last attempt ended: its run's outcome (run/run_outcome.h), which the launcher
  // decides from the run's summary.json and the attempt's exit code; nullopt while the point was not
  // reached (a Slurm job still queued or running when the sweep stopped). A point whose run had
  // completed before this sweep is `skipped` (its outcome completed).
  std::optional<run::RunOutcome> outcome;
  bool skipped = false;
  int attempt = 0;            // number of the last attempt (point_attempts.h)
  int attemptsRun = 0;        // attempts started by this sweep
  double startedAt = 0;       // Unix seconds, last attempt
  double seconds = 0;         // wall-clock seconds of the last attempt
  int exitCode = 0;
  std::string error;  // failed or interrupted: what went wrong, from summary.json or the log

  // The job table's state: "skipped", or the outcome's name.
  std::string state() const { return skipped ? "skipped" : run::outcomeText(outcome); }
};

class SweepRunner {
 public:
  virtual ~SweepRunner() = default;

  virtual std::vector<PointOutcome> run(const std::vector<GridPoint>& points, std::FILE* progress) = 0;

  // SIGINT or SIGTERM when one arrived while the sweep ran, else 0.
  virtual int stopSignal() = 0;
};

}  // namespace dtbench::sweep
