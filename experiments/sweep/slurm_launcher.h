#pragma once
// SlurmLauncher: `dtbench sweep --launcher slurm` (docs/sweep.md, slurm/README.md) submits every
// point that is not completed as one Slurm job through a job script of slurm/, then waits for the
// jobs and reads each point's state from its run directory.
//
// Contract (beyond SweepRunner's and point_attempts.h's):
//  - Submission: `sbatch --parsable --job-name=<name> --ntasks=<world> --output=DIR/<name>.log
//    --open-mode=append --export=ALL [--ntasks-per-node=<world> --gres=gpu:<world>, for the
//    default GPU script only] <--sbatch-args words> SCRIPT <train flags> <the point's flags>`, with
//    DTBENCH (this binary), RUNS (DIR, absolute) and RUN_NAME (<name>) in sbatch's environment;
//    the script runs `dtbench train ... --out $RUNS/$RUN_NAME` (slurm/lib/dtbench_job.sh). SCRIPT
//    is --slurm-script, else <slurm dir>/train_gpus.sbatch when the point's flags say
//    `--device cuda`, else <slurm dir>/train_cpu.sbatch.
//  - A point on M nodes (a nodes axis, K = --ranks-per-node, world M × K) is submitted with
//    `--nodes=M --ntasks=<world> --ntasks-per-node=K` in place of `--ntasks=<world>` (--ntasks
//    too, so that a script's own `#SBATCH --ntasks` cannot change the world); SCRIPT is
//    --slurm-script, else <slurm dir>/train_multinode.sbatch, which runs `--device cuda` unless the
//    flags name a device (so a point on nodes without --device counts as a GPU point). With that
//    default script a GPU point adds `--gres=gpu:K` (one GPU per rank of a node) and a CPU point
//    `--gres=none`, which cancels the script's `#SBATCH --gres=gpu:1` (nodes without GPUs refuse it).
//  - A node range (--min-nodes MIN, a point on M > MIN nodes): `--nodes=MIN-M` and neither --ntasks nor
//    --ntasks-per-node, so that Slurm starts the job on as many of MIN..M nodes as are free, and a requeued
//    job on as many as are free then (sbatch turns --ntasks-per-node=K into a task count of MIN x K, which
//    caps the nodes, and Slurm keeps a requeued job's task count from its first start). The job script
//    counts the ranks from the nodes it got (slurm/lib/dtbench_job.sh, dtbench_job_world) and a
//    checkpoint of another world resumes at the new one. With K > 1 a node must hold K ranks' CPUs:
//    `--mincpus=K x C`, C the --cpus-per-task of --sbatch-args (else 1). A point on at most MIN nodes is
//    submitted as without --min-nodes. Every point on nodes has DTBENCH_TASKS_PER_NODE=K in its
//    environment, so that the job script runs K ranks a node whatever the caller's environment holds.
//  - Points that would share one machine run one at a time: on the emulated cluster (DTBENCH_CLUSTER
//    set: its nodes are namespaces of one machine), each job is submitted with
//    `--dependency=afterany:<the job submitted before it>` while that job is still queued or running,
//    so Slurm starts it when the one before has ended; unless --allow-overlap. On a real cluster the
//    points run as Slurm places them.
//  - Before a point is submitted its directory is moved aside, except an `interrupted` run with
//    checkpoint/state.json, which the job script continues with --resume. A failed submission
//    (sbatch's exit code) fails the point without a retry.
//  - Waiting: `squeue -h -j <ids> -o %i,%T` every few seconds. A job that has left the queue (or
//    shows an ended state) is finished; a requeued job (PENDING again, REQUEUED) is waited for.
//    The point is completed when summary.json says so; a finished job that left no DIR/<name>
//    gets an empty one, so every attempt leaves a directory. A failed point is moved aside and
//    resubmitted while retries are left; an interrupted one, or one whose job exited with a usage
//    error (exit code 2), is not resubmitted.
//  - SIGINT or SIGTERM while it runs: the sweep's jobs that are still queued or running are
//    cancelled (`scancel`), their points end `interrupted`, no further job is submitted.
//    `timeoutSeconds` > 0 bounds the whole run(): then the remaining jobs are cancelled and their
//    points fail. The destructor cancels jobs still active (an exception left run()).
//  - Missing scripts throw common::UsageError before any job is submitted, and so does a
//    missing `sbatch` when there is something to submit (checkSubmissions, which the sweep calls
//    before it takes DIR's lock, so that a refused sweep leaves nothing in DIR).
//  - A --mode dp point (GridPoint::processGpus) is one task that drives the GPUs of its world:
//    `--ntasks=1 --ntasks-per-node=1 --gres=gpu:<its GPUs>` through the default GPU script.
//  - At the end (not after SIGINT or SIGTERM), what Slurm's accounting recorded for the jobs of
//    every run directory under DIR and of this run goes to DIR/sacct.txt (slurm_accounting.h), for
//    the job table; without accounting a note says so and the sweep goes on.

#include <cstdio>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_runner.h"
#include "experiments/sweep/sweep_session.h"
#include "run/run_outcome.h"

namespace dtbench::sweep {

struct SbatchSubmission {
  std::vector<std::pair<std::string, std::string>> environment;  // DTBENCH, RUNS, RUN_NAME[, DTBENCH_TASKS_PER_NODE]
  std::vector<std::string> command;                              // sbatch ... SCRIPT flags...
};

// The job script of a point (see the contract); throws common::UsageError when it does not exist.
std::string slurmScript(const GridPoint& point, const SweepSettings& settings);

// The submission of one point (see the contract); `after`: the job it must wait for ("" none).
SbatchSubmission sbatchSubmission(const GridPoint& point, const SweepSettings& settings,
                                  const std::string& after = "");

// --min-nodes MIN against the grid: MIN >= 1 and a nodes axis to apply to. Throws common::UsageError
// naming what to change.
void checkMinNodes(int minNodes, const Grid& grid);

// What run() refuses before submitting anything: for every point not completed, a job script that
// does not exist or does not fit --gpu-type (slurmScript); and no `sbatch` in PATH when there is
// such a point. Throws common::UsageError; starts nothing, writes nothing.
void checkSubmissions(const std::vector<GridPoint>& points, const SweepSettings& settings);

// Whether the sweep's points would share one machine under Slurm (the emulated cluster: DTBENCH_CLUSTER
// set) and must then run one at a time (not with --allow-overlap).
bool pointsRunOneAtATime(const SlurmSettings& settings);

// What a run directory in state `state` (directoryState) becomes before the point is submitted:
// true when the job script continues it (interrupted with a checkpoint), false when it is moved
// aside or there is none.
bool resumesRun(const std::string& runDirectory, const std::optional<run::RunOutcome>& state);

class SlurmLauncher : public SweepRunner {
 public:
  explicit SlurmLauncher(SweepSettings settings);
  ~SlurmLauncher() override;

  std::vector<PointOutcome> run(const std::vector<GridPoint>& points, std::FILE* progress) override;
  int stopSignal() override;

 private:
  struct Job {
    size_t point;  // index into the points and outcomes
    std::string id;
    std::streamoff logOffset = 0;  // where this attempt's output starts in DIR/<name>.log
  };

  void submit(size_t index, bool firstAttempt);
  void finish(const Job& job, const std::string& slurmState);
  void cancelActive(const std::string& reason, run::RunOutcome state);
  // scancel IDS, then wait until each has ended or left the queue. A cancel that reaches a job while
  // slurmd is launching it can come back as a requeue (slurmctld puts the job back PENDING, held by
  // a BeginTime), so a job seen pending again is cancelled again. Returns the ids still queued when
  // kCancelDeadlineSeconds run out.
  std::vector<std::string> cancelJobs(const std::vector<std::string>& ids);
  std::vector<std::string> activeIds() const;
  void appendToLog(const PointOutcome& outcome, const std::string& text) const;

  SweepSettings settings_;
  SweepSession session_;
  std::vector<GridPoint> points_;
  std::vector<PointOutcome> outcomes_;
  std::vector<Job> active_;
  std::vector<std::string> submitted_;  // every job id this run() submitted
  std::FILE* progress_ = stdout;
};

}  // namespace dtbench::sweep
