#pragma once
// Trainer: one training run of one rank, from configuration to finished run directory.
//
// The step (trainer/step/train_step.h): data -> copy -> forward -> backward -> synchronize -> update,
// every phase timed into a StepRecord. With several ranks (world size > 1, or --backend mpi) the
// rank joins the World (trainer/world.h), starts from rank 0's parameters and buffers, takes its
// DistributedSampler shard of every epoch, and synchronizes through a GradientSync (--sync ssgd:
// trainer/sync/bucketed_allreduce.h; pairavg: trainer/sync/pair_averaging.h) whose collectives run
// on a CommWorker; a single rank has nothing to synchronize and its communication columns are 0.
// Rank 0 alone writes the run directory (trainer/record/run_recorder.h): every epoch end (and checkpoint)
// the other ranks' rows and trace events reach it over the communicator; rank 0 evaluates on the
// test set.
//
// Ends (run/run_outcome.h): completed; failed with the error when anything throws (a dead or stalled
// peer, bad data), the exception propagating; interrupted when SIGTERM or SIGINT reached some rank:
// all ranks agree on it within the step's collectives, stop after the same step and write a
// checkpoint (trainer/checkpoint/checkpointer.h), and run() returns the summary with that outcome
// (the command exits run::kRequeueExitCode). --resume continues from the checkpoint: parameters, optimizer state, sampler position
// and RNG, so the finished run equals an uninterrupted one.

#include <memory>

#include "run/run_summary.h"
#include "trainer/config.h"

namespace dtbench::trainer {

class Trainer {
 public:
  // Validates the configuration, loads the data, builds model and optimizer, and creates the run
  // directory. Throws common::UsageError for bad flags, data::DataError for bad data,
  // std::runtime_error for an unusable run directory.
  explicit Trainer(const RunConfig& config);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains and returns the final summary.json content. On failure the run directory records
  // status "failed" and the error, and the exception propagates.
  run::RunSummary run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dtbench::trainer
