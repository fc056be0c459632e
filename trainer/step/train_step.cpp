#include "trainer/step/train_step.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>
#include <memory>
#include <ratio>

#include <torch/nn/functional/loss.h>

#include "comm/traffic/traffic_recorder.h"
#include "compat/torch_compat.h"
#include "data/loader.h"
#include "trainer/step/numerics/precision.h"
#include "trainer/step/step_jitter_sleep.h"
#include "trainer/sync/comm_worker.h"

namespace dtbench::trainer {

TrainStep::TrainStep(StepParts parts) : p_(std::move(parts)) {
  if (!p_.config.gpu.cudaGraph) return;
  auto* sgd = dynamic_cast<MultiTensorSGD*>(&p_.optimizer);
  if (!sgd) throw std::invalid_argument("--cuda-graph captures the fused SGD step only: use --optimizer sgd");
  captured_ = std::make_unique<GraphedTrainStep>(
      GraphedTrainStepParts{p_.model, *sgd, p_.ampDtype, p_.config.precision.channelsLast, p_.device},
      p_.makeDeviceGraph ? p_.makeDeviceGraph(p_.device) : cudaDeviceGraph(p_.device));
  captureStream_ = SideStream::forDevice(p_.device);
}

StepOutcome TrainStep::run(int64_t epoch, int64_t step, int64_t globalStep, std::vector<TraceEvent>* trace) {
  // --cuda-graph on a GPU: on the capture's stream, once what was queued before on the current one is
  // done (the CPU, where tests capture through another DeviceGraph, has no streams).
  std::optional<SideStream::Scope> onCaptureStream;
  if (captureStream_) onCaptureStream.emplace(*captureStream_, *captureStream_->markCurrent());
  StepOutcome outcome;
  run::StepRecord& r = outcome.record;
  r.rank = p_.world ? p_.world->rank() : 0;
  r.epoch = epoch;
  r.step = step;
  if (p_.config.gpu.phaseTiming == run::PhaseTiming::kEvents) outcome.events = p_.phaseEvents->acquire();
  StepTimer timer(p_.device, p_.config.gpu.phaseTiming, outcome.events.get(), r, p_.traceClock, trace);
  const int64_t sentBefore = p_.world ? p_.world->recorder->bytesSent() : 0;
  const int64_t receivedBefore = p_.world ? p_.world->recorder->bytesReceived() : 0;

  Batch host = nextBatch(epoch, step);
  timer.end("data", &run::StepRecord::dataS);
  outcome.sampleIndices = std::move(host.indices);
  if (captured_ && eagerSteps_ >= GraphedTrainStep::kWarmupSteps && captured_->accepts(host.images, host.labels)) {
    runCaptured(host, outcome, timer);
    timer.finish();
    outcome.deferredPhases = timer.deferredPhases();
    return outcome;
  }
  if (captured_) {
    captured_->refreshLearningRates();  // the eager step's fused SGD reads them too
    ++eagerSteps_;
  }
  const Batch batch = copyToDevice(host);
  timer.end("h2d", &run::StepRecord::h2dS);
  const Forward out = forward(batch);
  sleepStepJitter(p_.config, r.rank, globalStep);  // --inject-step-jitter: part of forward_s, before any gradient
  timer.end("forward", &run::StepRecord::forwardS);
  const bool stopRequested = p_.stopSignal.requested();
  backward(out, globalStep, stopRequested);
  timer.end("backward", &run::StepRecord::backwardS);
  outcome.stop = synchronize(r, timer, globalStep, stopRequested, trace);
  update();
  timer.end("optimizer", &run::StepRecord::optimizerS);

  r.samples = batch.labels.size(0);
  r.loss = out.loss.item<double>();
  r.accuracy = out.logits.argmax(1).eq(batch.labels).sum().item<double>() / static_cast<double>(r.samples);
  if (p_.world) {
    r.bytesSent = p_.world->recorder->bytesSent() - sentBefore;
    r.bytesRecv = p_.world->recorder->bytesReceived() - receivedBefore;
  }
  timer.finish();
  outcome.deferredPhases = timer.deferredPhases();
  return outcome;
}

void TrainStep::runCaptured(const Batch& host, StepOutcome& outcome, StepTimer& timer) {
  run::StepRecord& r = outcome.record;
  captured_->load(host.images, host.labels);
  timer.end("h2d", &run::StepRecord::h2dS);
  const bool stopRequested = p_.stopSignal.requested();
  if (!captured_->captured()) captured_->capture();
  captured_->replay();
  timer.end("graph");
  const at::Tensor out = captured_->outputs().to(at::kCPU);  // the step's one synchronization
  const double unmeasured = std::numeric_limits<double>::quiet_NaN();
  r.forwardS = r.backwardS = r.optimizerS = unmeasured;
  r.samples = host.labels.size(0);
  r.loss = out[0].item<double>();
  r.accuracy = out[1].item<double>() / static_cast<double>(r.samples);
  outcome.stop = stopRequested;
  outcome.replayed = true;
}

TrainStep::Batch TrainStep::nextBatch(int64_t epoch, int64_t step) {
  std::optional<data::Batch> batch = p_.loader.next();
  TORCH_CHECK(batch.has_value(), "the loader ran out of batches at step ", step, " of epoch ", epoch);
  return {batch->images, batch->labels, std::move(batch->indices)};
}

TrainStep::Batch TrainStep::copyToDevice(const Batch& batch) const {
  return {inMemoryFormat(batch.images.to(p_.device, /*non_blocking=*/true), p_.config.precision.channelsLast),
          batch.labels.to(p_.device, /*non_blocking=*/true), {}};
}

// --mode dp: LibTorch's DataParallel replicates the model onto every visible GPU on each call,
// scatters the batch, and gathers the outputs on GPU 0; backward flows to the original parameters
// (BatchNorm statistics updated in the replicas are lost, as in Python's DataParallel).
// --amp: forward and loss under autocast; backward outside it (trainer/step/numerics/precision.h).
TrainStep::Forward TrainStep::forward(const Batch& batch) {
  const AutocastScope autocast(p_.device.type(), p_.ampDtype);
  const at::Tensor logits = p_.config.mode == ParallelMode::kDp ? p_.model->forwardDataParallel(batch.images)
                                                                 : p_.model->forward(batch.images);
  return {logits, torch::nn::functional::cross_entropy(logits, batch.labels)};
}

void TrainStep::backward(const Forward& out, int64_t globalStep, bool stopRequested) {
  if (p_.sync) p_.sync->beforeBackward(globalStep, stopRequested);
  // fp16: scaled gradients, all-reduced as they are.
  const at::Tensor loss = p_.scaler ? p_.scaler->scale(out.loss) : out.loss;
  if (p_.readyProbe) p_.readyProbe->arm();
  loss.backward();
  if (p_.readyProbe) p_.readyProbe->disarm();
}

// comm_total_s = the union of the step's collective intervals; comm_exposed_s = from the end of
// backward (the timer's last end) to the completion of the last collective.
bool TrainStep::synchronize(run::StepRecord& r, StepTimer& timer, int64_t globalStep, bool stopRequested,
                            std::vector<TraceEvent>* trace) {
  if (!p_.sync) return stopRequested;
  const StepTimer::TimePoint backwardEnd = timer.last();
  const SyncResult result = p_.sync->afterBackward();
  timer.end("sync");
  r.commTotalS = unionSeconds(result.intervals);
  StepTimer::TimePoint lastCompletion = backwardEnd;
  for (const CommWorker::Interval& interval : result.intervals) {
    lastCompletion = std::max(lastCompletion, interval.completed);
    if (trace)
      trace->push_back({interval.name,
                        "comm",
                        static_cast<int>(r.rank),
                        kCommunicationLane,
                        p_.traceClock.us(interval.issued),
                        std::chrono::duration<double, std::micro>(interval.completed - interval.issued).count(),
                        {{"started_us", p_.traceClock.us(interval.started)}, {"step", globalStep}}});
  }
  r.commExposedS = std::chrono::duration<double>(lastCompletion - backwardEnd).count();
  r.compressS = result.compressS;
  r.gradCollectives = result.gradCollectives;
  return result.stopAgreed;
}

void TrainStep::update() {
  if (p_.scaler) {
    // Unscaled after the all-reduce: every rank finds the same inf/NaN and skips the same steps
    // (Note [loss scaling and the all-reduce] in trainer/step/numerics/grad_scaler.h).
    p_.scaler->step(p_.optimizer);
    p_.scaler->update();
  } else {
    p_.optimizer.step();
  }
  compat::zeroGradInPlace(p_.optimizer);
}

}  // namespace dtbench::trainer
