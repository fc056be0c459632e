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
//
// --resume at another world size (--sync ssgd; docs/design.md, "Resuming at another world size"): the
// run is a list of segments, stretches at one world (RunSegment; state.json and config.json
// "segments"). By default the global batch stays: the per-rank batch becomes global / new world, and a
// world size that does not divide it is refused (common::UsageError naming the sizes that do and
// --allow-global-batch-change, which keeps the per-rank batch and scales the learning rate by new global /
// old global). The epoch in progress continues from its consumed prefix (data/sampler.h): the checkpoint
// holds the positions of the epoch's list consumed before the segment's first step (epoch_start) and
// the steps before it (steps_before); the new ranks take the rest of the list. Model, optimizer state
// (momentum) and buffers are rank 0's (ssgd ranks are identical), so is the loss scaler's state; each
// rank's RNG, which cannot map to another world, is seeded with counterHash(seed, global step, rank,
// kStreamResized); rank r takes the epoch's step records of old ranks r, r + N, r + 2N, ... merged per
// step, so the epoch's samples and loss count every old rank's. pairavg's per-rank models and
// --compress's per-rank residuals cannot be dealt to another world: refused before anything is changed.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "run/run_segment.h"
#include "trainer/config.h"
#include "trainer/record/run_recorder.h"
#include "trainer/step/numerics/grad_scaler.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// Where the run stands: what a checkpoint records and --resume restores.
struct RunPosition {
  int64_t epoch = 1;       // the epoch in progress
  int64_t stepsDone = 0;   // steps of that epoch already taken
  int64_t globalStep = 0;  // steps taken in the whole run
  double elapsedS = 0;     // sum of step_s so far
  // When the current segment began inside the epoch in progress (a resume at another world size): the
  // positions of the epoch's list consumed before the segment's first step (data/sampler.h's `start`;
  // the dataset's size when the epoch was finished) and the epoch's steps before it. 0 and 0 otherwise.
  int64_t epochStart = 0;
  int64_t stepsBefore = 0;
};

// One stretch of the run at one world (config.json, summary.json and state.json "segments"; run/run_segment.h).
// The learning rate has no schedule: it is constant within a segment (a global-batch change rescales it at
// the segment's start).
using RunSegment = run::RunSegment;

// The segment a run at `worldSize` continues after `last` (`allowGlobalBatchChange`: the flag), its first
// step `firstGlobalStep`: the same global batch over `worldSize` ranks, or with the flag where that does
// not divide, the same per-rank batch and lr x new global / old global. common::UsageError when the global
// batch does not divide and the flag is off, naming the nearest world sizes that divide and the flag.
RunSegment nextSegment(const RunSegment& last, int64_t worldSize, int64_t ranksPerNode, int64_t firstGlobalStep,
                       bool allowGlobalBatchChange);

// Steps of an epoch continued from `start` consumed positions after `stepsBefore` steps (data/sampler.h's
// dealing of the rest over `worldSize` ranks of `batchSize`), `maxSteps` (0: none) capping the epoch's total:
// stepsBefore + the rest's batches (at most maxSteps - stepsBefore). With start 0 and stepsBefore 0, a whole
// epoch's (Loader::batchesPerEpoch, capped).
int64_t epochStepsFrom(int64_t datasetSize, int64_t start, int64_t stepsBefore, int64_t worldSize, int64_t batchSize,
                       bool dropLast, int64_t maxSteps);

class Checkpointer {
 public:
  // `world` is null for one rank, `scaler` without --amp fp16; every object outlives the Checkpointer.
  Checkpointer(const RunConfig& config, World* world, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
               GradScaler* scaler, RunRecorder& recorder);

  void write(const RunPosition& position);

  // Throws common::UsageError when there is nothing to resume or the flags differ from the run's,
  // std::runtime_error naming the file (and the key of state.json) when the directory is in use by
  // another process or the checkpoint is incomplete, damaged or does not fit the run.
  // `datasetSize`: the training set's, over which the epoch in progress is dealt.
  RunPosition restore(int64_t datasetSize);

  // The segment the run trains now (its first, or the one --resume started or continues): the per-rank
  // batch and learning rate to train with, and its number (0 for the first; the ledger's `segment`).
  const RunSegment& segment() const { return segments_.back(); }
  int64_t segmentIndex() const { return static_cast<int64_t>(segments_.size()) - 1; }

  // Resize latency (run/run_segment.h): every rank, just before each step; the first step of a segment this
  // process's restore() started records rank 0's clock as the segment's first_step_at. Cheap after that.
  void stepStarting();
  // Rank 0, between steps (at every epoch end, before the epoch's summary.json): once the segment's first
  // step has started, config.json's "segments" get its latency (once); the recorder's summary always holds
  // the run's segments. write() does it too. Nothing for a run of one segment.
  void recordSegments();

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
  std::vector<RunSegment> segments_;  // the run's, the current one last
  bool newSegment_ = false;           // restore() started the current segment (a resume at another world size)
  bool latencyRecorded_ = false;      // config.json holds the new segment's first_step_at
};

}  // namespace dtbench::trainer
