#pragma once
// Checkpointer: the run's side of checkpoint and resume (docs/design.md, "Signals, failures and
// resume"), on top of the checkpoint folder (run/checkpoint_folder.h), the model and
// optimizer archive (training_state.h) and the generators' state (rng_state.h). Collective: every
// rank calls write() and restore() at the same point of the run.
//
// write(): every rank contributes its RNG state, its StepRecords of the epoch in progress and its
// loss scaler's state; rank 0 writes them with the model and optimizer, the run's position and the
// recorder's state into <out>/checkpoint. Under ssgd every rank holds the same model and optimizer
// state, so rank 0's stand for all; under pairavg they differ and every rank's travel to rank 0
// (rank0.pt, rank1.pt, ...).
//
// restore() (--resume): rank 0 takes the run directory's lock (a run still writing it is refused
// before anything is read), checks that the run exists, was not completed and was started with
// the same result-affecting flags (sharedSettings()), reads the checkpoint and checks every field
// of state.json against the run (types, ranges, the finished epochs' steps, the CSV logs' sizes at
// row boundaries holding exactly the rows of the steps taken) and that every model file it needs
// is there and readable, loads its own model, and only then reopens the run directory into the
// recorder, which cuts the logs back: a refused --resume changes nothing. Then the state reaches
// every rank (state.json first, then the model archives), and each rank puts back its model,
// optimizer, RNG, scaler and records. The finished run equals an uninterrupted one.

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "trainer/config.h"
#include "trainer/step/grad_scaler.h"
#include "trainer/record/run_recorder.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// Where the run stands: what a checkpoint records and --resume restores.
struct RunPosition {
  int64_t epoch = 1;       // the epoch in progress
  int64_t stepsDone = 0;   // steps of that epoch already taken
  int64_t globalStep = 0;  // steps taken in the whole run
  double elapsedS = 0;     // sum of step_s so far
};

class Checkpointer {
 public:
  // `world` is null for one rank, `scaler` without --amp fp16; every object outlives the Checkpointer.
  Checkpointer(const RunConfig& config, World* world, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
               GradScaler* scaler, RunRecorder& recorder);

  void write(const RunPosition& position);

  // Throws common::UsageError when there is nothing to resume or the flags differ from the run's,
  // std::runtime_error naming the file (and the key of state.json) when the directory is in use by
  // another process or the checkpoint is incomplete, damaged or does not fit the run.
  RunPosition restore();

  // The gradient synchronization whose state (--compress powersgd's residuals and factors, one file per
  // rank: sync_rank<R>.pt) checkpoints carry; what restore() read is loaded into it here. Call once,
  // after restore() when resuming, before the first step.
  void attachSync(GradientSync& sync);

 private:
  bool root() const { return !world_ || world_->rank() == 0; }
  bool keepsSyncState() const;

  const RunConfig& config_;
  World* world_;
  torch::nn::Module& model_;
  torch::optim::Optimizer& optimizer_;
  GradScaler* scaler_;
  RunRecorder& recorder_;
  GradientSync* sync_ = nullptr;
  std::string restoredSyncState_;  // this rank's, from restore() until attachSync()
};

}  // namespace dtbench::trainer
