#pragma once
// TrainStep: one training step of one rank (docs/design.md, "The step"), in its six phases:
//
//   data         wait for the loader's next batch                          data_s
//   copy         host-to-device copy of images and labels                   h2d_s
//   forward      forward and loss (under autocast with --amp), then         forward_s
//                --inject-step-jitter's delay (trainer/step/step_jitter_sleep.h)
//   backward     backward; ssgd's buckets start all-reducing from hooks     backward_s
//   synchronize  wait for the step's collectives (GradientSync)             comm_total_s, comm_exposed_s
//   update       optimizer step (loss-scaled with --amp fp16), zero grads   optimizer_s
//
// then the bookkeeping the step's record needs (samples, loss and accuracy read back, bytes moved),
// which step_s includes. Every phase is timed by the StepTimer (trainer/step/step_timer.h), which fills
// the StepRecord (under --phase-timing events, the device phases later, from the outcome's events:
// trainer/step/pending_steps.h) and, with --timeline, the trace; the collectives' intervals go to the trace's
// communication lane. A single rank has no GradientSync: nothing to synchronize, communication 0.
//
// Rank 0's GradientReadyProbe is armed right before loss.backward() and disarmed after it, so its
// offsets count from the call of backward (after GradientSync::beforeBackward), not from the start
// of the backward phase.
//
// --cuda-graph (trainer/step/graph/graphed_train_step.h): every step runs on the capture's stream, after the work
// queued before it on the previous current stream. The first GraphedTrainStep::kWarmupSteps steps, and
// any batch whose shape differs from the captured one, are eager as above; the others load the batch
// into the static inputs (the h2d phase) and replay one graph of forward, loss, backward and the
// optimizer (a phase named "graph" in the trace, with no column of its own), then read the loss
// and the right answers back in one copy.
//
// Preemption: the step reads the stop flag before backward and carries it into the step's
// collectives (trainer/sync/gradient_sync.h); the outcome says whether some rank asked to stop,
// so every rank stops after the same step.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "data/prefetch_loader.h"
#include "models/classifier.h"
#include "run/step_record.h"
#include "trainer/config.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/gradient_ready.h"
#include "trainer/step/graph/graphed_train_step.h"
#include "trainer/step/numerics/grad_scaler.h"
#include "trainer/step/phase_events.h"
#include "trainer/step/step_timer.h"
#include "trainer/stop_signal.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/sync/side_stream.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// What a step works with; every object outlives the TrainStep. `scaler` (--amp fp16), `sync`,
// `world` (several ranks) and `readyProbe` (rank 0) may be null.
struct StepParts {
  const RunConfig& config;
  c10::Device device;
  data::PrefetchLoader& loader;
  models::ClassifierPtr model;
  torch::optim::Optimizer& optimizer;
  std::optional<at::ScalarType> ampDtype;
  GradScaler* scaler;
  GradientSync* sync;
  GradientReadyProbe* readyProbe;  // armed around loss.backward() (trainer/step/gradient_ready.h)
  World* world;
  StopSignalHandler& stopSignal;
  const TraceClock& traceClock;
  PhaseEventSource* phaseEvents;  // --phase-timing events only; null otherwise
  // --cuda-graph: the graph the step is captured into; null: cudaDeviceGraph (tests pass another).
  std::function<std::unique_ptr<DeviceGraph>(c10::Device)> makeDeviceGraph = nullptr;
};

struct StepOutcome {
  run::StepRecord record;
  bool stop = false;  // some rank asked to stop: every rank stops after this step
  // --phase-timing events: the step's marks and the columns of `record` still to fill from them.
  std::unique_ptr<PhaseEvents> events;
  std::vector<DeferredPhase> deferredPhases;
  // --cuda-graph: the step was a replay of the captured step (trainer/step/graph/graphed_train_step.h): its
  // forward, backward and optimizer columns are empty and no gradient-ready times were taken.
  bool replayed = false;
  // The dataset indices the loader put into the step's batch, in batch order (--sample-ledger).
  std::vector<int64_t> sampleIndices;
};

class TrainStep {
 public:
  // With --cuda-graph, makes the GraphedTrainStep (a CUDA graph on the run's device).
  explicit TrainStep(StepParts parts);

  // Step `step` (1-based) of `epoch`; `globalStep` counts this step over the whole run (1-based).
  // Trace events go to `trace` when it is not null (--timeline).
  StepOutcome run(int64_t epoch, int64_t step, int64_t globalStep, std::vector<TraceEvent>* trace);

 private:
  struct Batch {
    at::Tensor images;
    at::Tensor labels;
    std::vector<int64_t> indices;  // the host batch's dataset indices; empty on the device's copy
  };
  struct Forward {
    at::Tensor logits;
    at::Tensor loss;
  };

  Batch nextBatch(int64_t epoch, int64_t step);
  Batch copyToDevice(const Batch& batch) const;
  Forward forward(const Batch& batch);
  void backward(const Forward& out, int64_t globalStep, bool stopRequested);
  bool synchronize(run::StepRecord& record, StepTimer& timer, int64_t globalStep, bool stopRequested,
                   std::vector<TraceEvent>* trace);
  void update();
  // --cuda-graph, after GraphedTrainStep::kWarmupSteps eager steps: the batch into the static inputs,
  // then the captured step (captured at the first call), its loss and right answers read back.
  void runCaptured(const Batch& host, StepOutcome& outcome, StepTimer& timer);

  StepParts p_;
  std::unique_ptr<GraphedTrainStep> captured_;  // --cuda-graph only
  std::optional<SideStream> captureStream_;  // --cuda-graph on a GPU: every step's stream
  int64_t eagerSteps_ = 0;
};

}  // namespace dtbench::trainer
