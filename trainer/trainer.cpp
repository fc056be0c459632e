#include "trainer/trainer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include "comm/allgather_values.h"
#include "comm/backends/backend.h"
#include "comm/backends/gpu_devices.h"
#include "comm/backends/make_communicator.h"
#include "comm/communicator.h"
#include "comm/traffic/message_log.h"
#include "comm/work.h"
#include "common/clock.h"
#include "common/usage_error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/prefetch_loader.h"
#include "models/classifier.h"
#include "models/registry.h"
#include "run/epoch_stats.h"
#include "run/run_directory.h"
#include "run/step_record.h"
#include "trainer/checkpoint/checkpointer.h"
#include "trainer/config_agreement.h"
#include "trainer/datasets.h"
#include "trainer/memory_policy.h"
#include "trainer/progress.h"
#include "trainer/record/config_json.h"
#include "trainer/record/device_facts.h"
#include "trainer/record/environment.h"
#include "trainer/record/parameter_checksum.h"
#include "trainer/record/run_recorder.h"
#include "trainer/record/speed_of_light.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/gradient_ready.h"
#include "trainer/step/numerics/grad_scaler.h"
#include "trainer/step/numerics/optimizer.h"
#include "trainer/step/numerics/precision.h"
#include "trainer/step/pending_steps.h"
#include "trainer/step/phase_events.h"
#include "trainer/step/train_step.h"
#include "trainer/stop_signal.h"
#include "trainer/sync/bucket_assignment.h"
#include "trainer/sync/bucketed_allreduce.h"
#include "trainer/sync/comm_worker.h"
#include "trainer/sync/compression_notice.h"
#include "trainer/sync/flat_tensors.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/sync/pair_averaging.h"
#include "trainer/thread_share.h"
#include "trainer/world.h"

namespace dtbench::trainer {

using common::UsageError;

struct Trainer::State {
  RunConfig config;
  torch::Device device{torch::kCPU};
  TraceClock traceClock;
  data::DatasetSplits data;
  models::ClassifierPtr model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<at::ScalarType> ampDtype;          // --amp: autocast's type around forward and loss
  std::unique_ptr<GradScaler> scaler;              // --amp fp16 only
  std::unique_ptr<GradientReadyProbe> readyProbe;  // rank 0 only: step_profile.json
  std::optional<data::PrefetchLoader> trainLoader;
  // A resume at another world size inside an epoch: the rest of that epoch's list, dealt to this world
  // (data/sampler.h); reset once the epoch ends.
  std::optional<data::PrefetchLoader> restLoader;
  std::optional<data::PrefetchLoader> testLoader;  // rank 0 only
  // Distributed runs only; destroyed in reverse order: hooks, then the worker, then the communicator.
  std::optional<World> world;
  std::unique_ptr<CommWorker> worker;
  std::unique_ptr<GradientSync> sync;
  std::optional<StopSignalHandler> stopSignal;
  std::optional<RunRecorder> recorder;
  std::optional<Checkpointer> checkpointer;
  std::optional<TrainStep> step;
  std::unique_ptr<PhaseEventSource> phaseEvents;  // --phase-timing events
  std::optional<PendingSteps> pending;            // steps whose phase columns wait for the device
  ProgressLine progress;
  RunPosition position;

  explicit State(const RunConfig& c) : config(resolveDefaults(c)), progress(c.quiet || c.rank() != 0) {}

  World* worldOrNull() { return world ? &*world : nullptr; }
  // The World's rank and size once the ranks have met (trainer/world.h); RunConfig keeps the launcher's.
  int rank() const { return world ? world->rank() : 0; }
  int worldSize() const { return world ? world->size() : 1; }
  bool root() const { return !world || world->rank() == 0; }

  void setUp(const std::string& memoryPolicy);
  void broadcastInitialState();
  void startSync();
  // The step, drawing its batches from `loader` (the training loader, or the rest of a resumed epoch's).
  void makeStep(data::PrefetchLoader& loader);
  void evaluate(run::EpochStats& stats);
  // Every rank waits here for what rank 0 alone does between steps; true when the ranks agree to stop.
  bool meetBetweenSteps();
  // The steps whose phase columns are known go to the recorder (all of them: waiting for the device).
  void recordPassedSteps() { recordSteps(pending->takePassed()); }
  void recordAllSteps() { recordSteps(pending->takeAll()); }
  void recordSteps(std::vector<PendingStep> steps);
  // Runs the epochs from the current position; true when the ranks agreed to stop (preemption).
  bool trainEpochs();
};

namespace {

// --device cuda: the GPU of this rank's local rank (comm/backends/gpu_devices.h). Without a GPU this
// fails here, before the rank meets any other.
torch::Device chooseDevice(const RunConfig& config) {
  if (config.device != DeviceKind::kCuda) return torch::Device(torch::kCPU);
  // What the same run can do without one, in its own flags (--mode dp has no CPU form).
  if (config.mode == ParallelMode::kDp)
    comm::requireGpu("--mode dp", "train one process per rank on the CPU instead (--device cpu, dtbench launch -n N)");
  else if (config.data.onDevice)
    comm::requireGpu("--data-on-device", "leave out --data-on-device and --device cuda (the CPU keeps the data in its "
                                         "memory anyway)");
  else
    comm::requireGpu("--device cuda", "use --device cpu");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(comm::cudaDeviceForLocalRank(config.comm.connection.localRank)));
}

// --threads 0 with several ranks: this rank's share of the cores it may run on, against the other ranks of
// its machine (trainer/thread_share.h), so that the ranks of one machine do not run more threads than it has
// cores. Collective.
int coreShare(const World& world) {
  const std::vector<std::string> sets = comm::allgatherStrings(*world.communicator, cpuListText(availableCpus()));
  const size_t rank = static_cast<size_t>(world.rank());
  std::vector<std::vector<int>> here;
  size_t self = 0;
  for (size_t r = 0; r < sets.size(); ++r) {
    if (world.hostNames.at(r) != world.hostNames.at(rank)) continue;
    if (r == rank) self = here.size();
    here.push_back(parseCpuList(sets[r]));
  }
  return sharedCoreThreads(here, self);
}

}  // namespace

Trainer::Trainer(const RunConfig& config) : state_(std::make_unique<State>(config)) {
  State& s = *state_;
  validate(s.config);
  const std::string memoryPolicy = applyMemoryPolicy();
  // 0 means every core this process may run on (LibTorch's own default counts the machine's); with several
  // ranks, setUp gives each its share once they have met.
  at::set_num_threads(s.config.threads > 0 ? static_cast<int>(s.config.threads) : availableCores());
  s.device = chooseDevice(s.config);
  if (s.device.is_cuda()) at::globalContext().setBenchmarkCuDNN(s.config.gpu.cudnnBenchmark);
  torch::manual_seed(s.config.seed);
  try {
    s.setUp(memoryPolicy);
  } catch (const std::exception& e) {
    if (s.world) {
      s.world->writeMessageLog(/*failure=*/true);
      s.world->communicator->abandon(errorMessage(e));  // the other ranks may wait for this one
    }
    throw;
  }
}

Trainer::~Trainer() = default;

// World, data, model, optimizer, loaders, run directory (or the checkpoint to resume), the
// gradient synchronization, and config.json with the summary's first "running".
void Trainer::State::setUp(const std::string& memoryPolicy) {
  // One rank meets no one over gloo; mpi asks MPI who it is, and nccl's all-reduce runs even alone.
  if (config.worldSize() > 1 || comm::backendRow(config.comm.connection.backend).joinsAlone) {
    world.emplace(joinWorld(config));
    // Before anything else communicates: a rank with other settings would issue other collectives.
    checkRanksAgree(*world->communicator, config, world->slowestLinkBps);
    const int share = coreShare(*world);  // collective: every rank, whatever its --threads
    if (config.threads == 0) at::set_num_threads(share);
  }
  stopSignal.emplace();

  data = loadDatasets(config, [this] { return stopSignal->requested(); });  // stops --download
  if (config.data.onDevice) moveToDevice(data, device);
  models::ModelOptions modelOptions;
  modelOptions.inputChannels = data.train.channels();
  modelOptions.numClasses = data.train.numClasses;
  model = models::makeModel(config.model, modelOptions);
  model->module().to(device);
  if (config.precision.channelsLast) toChannelsLast(model->module());  // before anything holds the parameters' storage
  optimizer = makeOptimizer(config, model->module().parameters());
  ampDtype = trainer::ampDtype(config.precision.amp);
  if (config.precision.amp == Amp::kFp16) scaler = std::make_unique<GradScaler>();
  // LibTorch's DataParallel runs the replicas' forwards on at::parallel_for threads, which do not
  // inherit this thread's autocast state; with one GPU it runs the plain forward here.
  if (ampDtype && config.mode == ParallelMode::kDp && torch::cuda::device_count() > 1)
    throw UsageError("--amp with --mode dp over " + std::to_string(torch::cuda::device_count()) +
                     " GPUs: DataParallel's replica threads do not inherit autocast; use one process per GPU "
                     "(dtbench launch -n N -- dtbench train ...) or --amp off");

  data::LoaderOptions trainOptions;
  trainOptions.batchSize = config.data.batchSize;
  trainOptions.train = true;
  trainOptions.dropLast = config.data.dropLast;
  trainOptions.seed = config.seed;
  trainOptions.rank = rank();
  trainOptions.worldSize = worldSize();
  data::LoaderOptions testOptions;
  testOptions.batchSize = config.data.testBatchSize;
  testOptions.train = false;
  data::PrefetchOptions prefetch;
  prefetch.workers = config.data.workers;
  prefetch.pinMemory = device.is_cuda() && !config.data.onDevice;  // for non-blocking copies
  trainLoader.emplace(data.train, trainOptions, prefetch);
  if (root()) testLoader.emplace(data.test, testOptions, prefetch);  // rank 0 evaluates

  // Every run, one rank included: when each gradient becomes ready (the hooks see the final
  // parameters: after the move to the device and to channels-last).
  if (root()) readyProbe = std::make_unique<GradientReadyProbe>(model->module());
  recorder.emplace(config, worldOrNull(), device, scaler.get(), readyProbe.get());
  checkpointer.emplace(config, worldOrNull(), model->module(), *optimizer, scaler.get(), *recorder);
  if (config.resume) {
    position = checkpointer->restore(data.train.size());
    // The segment's per-rank batch and learning rate (after a resume at another world size, not the flags';
    // the checkpointer has set the optimizer's).
    const RunSegment& segment = checkpointer->segment();
    config.optimizer.lr = segment.lr;
    if (segment.batchSize != config.data.batchSize) {
      config.data.batchSize = segment.batchSize;
      trainOptions.batchSize = segment.batchSize;
      trainLoader.emplace(data.train, trainOptions, prefetch);
    }
    if (position.epochStart > 0 && position.epochStart < data.train.size()) {
      data::LoaderOptions restOptions = trainOptions;
      restOptions.start = position.epochStart;
      restLoader.emplace(data.train, restOptions, prefetch);
    }
  } else if (root()) {
    recorder->open(run::RunDirectory(config.outDir));
  }
  recorder->startLaunch(position.globalStep);
  recorder->startSampleLedger(data.train.size(), std::min(config.maxSteps > 0 ? config.maxSteps : INT64_MAX,
                                                          trainLoader->batchesPerEpoch()),
                              position.globalStep, checkpointer->segmentIndex());
  if (world) {
    // Every rank starts from rank 0's model, except a resumed pairavg run, whose ranks each got
    // their own back from the checkpoint.
    if (!(config.resume && config.sync.kind == Sync::kPairavg)) broadcastInitialState();
    startSync();
    checkpointer->attachSync(*sync);
  }
  if (config.gpu.phaseTiming == run::PhaseTiming::kEvents) phaseEvents = phaseEventsFor(device);
  pending.emplace(phaseEvents.get());
  makeStep(*trainLoader);
  // Rank 0 counts the model's FLOPs and, on the CPU, probes the GEMM rate, while the other ranks wait in
  // describeDevices (a collective): before the first step, with no other rank computing beside it.
  std::optional<run::SpeedOfLight> speedOfLight;
  if (root()) speedOfLight = describeSpeedOfLight(config, data.train, device, describeDevice(device));
  std::vector<run::DeviceFacts> devices = describeDevices(device, worldOrNull());  // collective with a world
  if (root())
    recorder->begin(describeRun(config, memoryPolicy, model->module(), data, worldOrNull(), sync.get(),
                                std::move(devices), std::move(speedOfLight)));
  // What --compress will leave uncompressed, said before the run trains.
  if (root()) {
    const auto* bucketed = dynamic_cast<const BucketedAllreduce*>(sync.get());
    const int64_t steps = config.maxSteps > 0 ? std::min(config.maxSteps, trainLoader->batchesPerEpoch())
                                              : trainLoader->batchesPerEpoch();
    const std::string notice =
        compressionNotice(config, worldSize(), bucketed ? bucketed->bucketCollectives()
                                                        : std::vector<std::vector<BucketCollective>>{},
                          steps * config.epochs);
    if (!notice.empty()) std::fprintf(stderr, "dtbench train: %s\n", notice.c_str());
  }
}

// Parameters and floating-point buffers from rank 0, so every rank starts from the same model
// (docs/design.md, "Correctness guards"); on --resume this also hands rank 0's restored model to all.
void Trainer::State::broadcastInitialState() {
  std::vector<at::Tensor> tensors = model->module().parameters();
  for (const at::Tensor& b : floatingBuffers(model->module())) tensors.push_back(b);
  at::Tensor flat = at::empty({totalElements(tensors)}, at::TensorOptions(at::kFloat).device(world->communicator->device()));
  packInto(tensors, flat);
  const comm::MessageCategoryScope category(comm::MessageCategory::kInitial);
  world->communicator->broadcast(flat, 0)->wait();
  unpackFrom(flat, tensors);
}

void Trainer::State::makeStep(data::PrefetchLoader& loader) {
  step.emplace(StepParts{config, device, loader, model, *optimizer, ampDtype, scaler.get(), sync.get(),
                         readyProbe.get(), worldOrNull(), *stopSignal, traceClock, phaseEvents.get()});
}

void Trainer::State::startSync() {
  worker = std::make_unique<CommWorker>();
  if (config.sync.kind == Sync::kSsgd) {
    BucketedAllreduceOptions options;
    options.overlap = config.sync.overlap;
    options.limits.bucketBytes = run::mibToBytes(config.sync.bucketMb);
    options.broadcastBuffers = !config.sync.localBnStats;
    options.compression = {config.sync.compress, config.sync.compressRank, config.sync.compressStart, config.seed};
    sync = std::make_unique<BucketedAllreduce>(model->module(), *world->communicator, *world->allreduce, *worker, options);
  } else {
    sync = std::make_unique<PairAveraging>(model->module(), *world->communicator, *world->recorder, *worker, config.seed,
                                           config.impairment, holdBoundsFor(config));
  }
}

void Trainer::State::recordSteps(std::vector<PendingStep> steps) {
  for (const PendingStep& p : steps) recorder->addStep(p.record, p.globalStep, readyProbe ? &p.readyS : nullptr);
}

void Trainer::State::evaluate(run::EpochStats& stats) {
  if (!config.evaluate || data.test.size() == 0 || !root()) return;
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard noGrad;
  model->module().eval();
  testLoader->startEpoch(stats.epoch);
  int64_t correct = 0;
  int64_t seen = 0;
  bool cut = false;
  while (std::optional<data::Batch> batch = testLoader->next()) {
    // A stop signal ends the evaluation at once (a Slurm grace period is shorter than a test set's pass):
    // the epoch then records no accuracy, and the ranks stop at the epoch's end (meetBetweenSteps).
    if (stopSignal->requested()) {
      cut = true;
      break;
    }
    const AutocastScope autocast(device.type(), ampDtype);
    const torch::Tensor logits =
        model->forward(inMemoryFormat(batch->images.to(device), config.precision.channelsLast));
    correct += logits.argmax(1).eq(batch->labels.to(device)).sum().item<int64_t>();
    seen += batch->labels.size(0);
  }
  model->module().train();
  if (!cut) stats.testAccuracy = static_cast<double>(correct) / static_cast<double>(seen);
  stats.evalS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Note [Rank 0's work between steps]
// Rank 0 alone evaluates the model at an epoch's end and writes the run directory (rows, summary,
// checkpoint). Were the other ranks to go on, they would wait for it inside their next step's first
// collective, and that wait would count as their communication (comm_total_s, comm_exposed_s) and their
// step time, so T(N), a maximum over ranks, would hold rank 0's evaluation, which T(1) never holds, and
// --max-steps would extrapolate it as if every step paid it. So every rank meets here, after rank 0's
// work and before the next step: a one-element all-reduce outside any step, which also carries each
// rank's stop flag, so that a signal that arrived during the evaluation or a checkpoint stops every
// rank at this boundary (docs/report.md, "What T(N) includes").
bool Trainer::State::meetBetweenSteps() {
  if (!world) return stopSignal->requested();
  at::Tensor flag = at::full({1}, stopSignal->requested() ? 1.0F : 0.0F,
                             at::TensorOptions(at::kFloat).device(world->communicator->device()));
  world->communicator->allreduce(flag, comm::ReduceOp::kSum)->wait();
  return flag.item<float>() > 0;
}

bool Trainer::State::trainEpochs() {
  const int64_t fullSteps = trainLoader->batchesPerEpoch();
  const int64_t steps = config.maxSteps > 0 ? std::min(config.maxSteps, fullSteps) : fullSteps;
  const int64_t totalSteps = steps * config.epochs;
  model->module().train();
  for (int64_t epoch = position.epoch; epoch <= config.epochs; ++epoch) {
    position.epoch = epoch;
    // An epoch this segment continues from another world's consumed prefix (a resume at another world
    // size): its steps before the segment, then the rest of its list dealt to this world, none when the
    // other world finished it.
    const bool continued = position.stepsBefore > 0 || position.epochStart > 0;
    int64_t epochSteps = steps;
    int64_t epochFullSteps = fullSteps;
    if (continued) {
      const int64_t rest = restLoader ? restLoader->batchesPerEpoch() : 0;
      epochFullSteps = position.stepsBefore + rest;
      epochSteps = position.stepsBefore +
                   (config.maxSteps > 0 ? std::min(rest, std::max<int64_t>(0, config.maxSteps - position.stepsBefore))
                                        : rest);
      if (restLoader) makeStep(*restLoader);
    }
    recorder->setLedgerEpochSteps(epochSteps);
    data::PrefetchLoader& loader = continued && restLoader ? *restLoader : *trainLoader;
    loader.startEpoch(epoch);
    // Resumed mid-epoch: the batches this segment's loader dealt before the checkpoint.
    for (int64_t skip = continued ? position.stepsBefore : 0; skip < position.stepsDone; ++skip) loader.next();
    for (int64_t s = position.stepsDone + 1; s <= epochSteps; ++s) {
      checkpointer->stepStarting();  // a resized run's first step: its resize latency ends here
      StepOutcome outcome = step->run(epoch, s, position.globalStep + 1, recorder->trace());
      const run::StepRecord& r = outcome.record;
      ++position.globalStep;
      recorder->addSamples(epoch, s, position.globalStep, std::move(outcome.sampleIndices));  // --sample-ledger
      position.stepsDone = s;
      position.elapsedS += r.stepS;
      // A replayed step (--cuda-graph) ran no hook: no ready times.
      pending->add({r, position.globalStep, readyProbe && !outcome.replayed ? readyProbe->readyS() : std::vector<double>{},
                    std::move(outcome.events), std::move(outcome.deferredPhases)});
      recordPassedSteps();
      if (root()) {
        const double eta = position.elapsedS / static_cast<double>(position.globalStep) *
                           static_cast<double>(totalSteps - position.globalStep);
        progress.update(epoch, config.epochs, s, epochSteps, r.loss, r.samples * worldSize() / r.stepS, eta);
      }
      if (world && config.sync.checkEvery > 0 && position.globalStep % config.sync.checkEvery == 0)
        checkParametersAgree(*world->communicator, model->module(), position.globalStep);
      if (outcome.stop) {
        recordAllSteps();
        return true;
      }
      const bool lastOfEpoch = s == epochSteps;
      if (!lastOfEpoch && config.checkpointEvery > 0 && position.globalStep % config.checkpointEvery == 0) {
        recordAllSteps();
        recorder->gatherEpoch(epoch, epochFullSteps);  // rows so far reach the disk first
        checkpointer->write(position);
        if (meetBetweenSteps()) return true;
      }
    }
    recordAllSteps();
    run::EpochStats stats = recorder->gatherEpoch(epoch, epochFullSteps);
    progress.clear();
    evaluate(stats);
    checkpointer->recordSegments();  // summary.json's segments, and config.json's latency once known
    recorder->endEpoch(stats);
    if (continued) {
      // Later epochs are whole epochs of this world.
      if (restLoader) makeStep(*trainLoader);
      restLoader.reset();
      position.epochStart = 0;
      position.stepsBefore = 0;
    }
    position.stepsDone = 0;
    position.epoch = epoch + 1;
    if (epoch == config.epochs) break;  // the run is complete: nothing waits for rank 0
    if (config.checkpointEvery > 0) checkpointer->write(position);
    if (meetBetweenSteps()) return true;  // run() writes the checkpoint at the next epoch's start
  }
  return false;
}

run::RunSummary Trainer::run() {
  State& s = *state_;
  RunRecorder& recorder = *s.recorder;
  try {
    if (s.trainEpochs()) {
      // Agreed preemption: every rank stops after the same step (docs/design.md, "Signals, failures and resume").
      s.progress.clear();
      recorder.gatherEpoch(s.position.epoch, s.trainLoader->batchesPerEpoch());
      s.checkpointer->write(s.position);
      recorder.finish(parameterChecksum(s.model->module()));
      recorder.summary().interruptedAtStep = s.position.globalStep;
      recorder.writeSummary(run::RunOutcome::kInterrupted);
    } else {
      const double checksum = parameterChecksum(s.model->module());
      recorder.finish(checksum);
      recorder.summary().paramChecksum = checksum;
      recorder.summary().finishedAt = common::unixSeconds();
      recorder.writeSummary(run::RunOutcome::kCompleted);
    }
  } catch (const std::exception& e) {
    s.progress.clear();
    // The steps taken before the failure keep their rows, their columns empty where the device cannot tell.
    try {
      s.recordSteps(s.pending->takeAllAfterFailure());
    } catch (const std::exception&) {}  // the original error is the one to report
    recorder.recordFailure(errorMessage(e));
    if (s.world) {
      s.world->writeMessageLog(/*failure=*/true);
      s.world->communicator->abandon(errorMessage(e));  // the other ranks may wait for this one
    }
    throw;
  }
  // After the last collective, with the sockets still open (the end snapshot).
  if (s.world) s.world->writeMessageLog(/*failure=*/false);
  return recorder.summary();
}

}  // namespace dtbench::trainer
