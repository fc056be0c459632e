#include "trainer/trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>

#include "dtbench/build_config.h"
#if DTBENCH_TORCH_HAS_CUDA
// Needs CUDA's headers (through ATen/cuda), which only a CUDA build of LibTorch brings.
#include <torch/nn/parallel/data_parallel.h>
#endif
#include <torch/utils.h>

#include "comm/allgather_values.h"
#include "compat/torch_compat.h"
#include "data/prefetch_loader.h"
#include "models/registry.h"
#include "trainer/bucketed_allreduce.h"
#include "trainer/checkpoint.h"
#include "trainer/chrome_trace.h"
#include "trainer/comm_worker.h"
#include "trainer/datasets.h"
#include "trainer/environment.h"
#include "trainer/epoch_stats.h"
#include "trainer/flat_tensors.h"
#include "trainer/grad_scaler.h"
#include "trainer/memory_policy.h"
#include "trainer/optimizer.h"
#include "trainer/pair_averaging.h"
#include "trainer/phase_clock.h"
#include "trainer/precision.h"
#include "trainer/progress.h"
#include "trainer/run_directory.h"
#include "trainer/stop_signal.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// Where the run stands: what a checkpoint records and --resume restores.
struct Position {
  int64_t epoch = 1;       // the epoch in progress
  int64_t stepsDone = 0;   // steps of that epoch already taken
  int64_t globalStep = 0;  // steps taken in the whole run
};

struct Trainer::State {
  RunConfig config;
  torch::Device device{torch::kCPU};
  data::DatasetSplits data;
  models::ClassifierPtr model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<at::ScalarType> ampDtype;  // --amp: autocast's type around forward and loss
  std::unique_ptr<GradScaler> scaler;      // --amp fp16 only
  std::optional<data::PrefetchLoader> trainLoader;
  std::optional<data::PrefetchLoader> testLoader;
  // Distributed runs only; destroyed in reverse order: hooks, then the worker, then the communicator.
  std::optional<World> world;
  std::unique_ptr<CommWorker> worker;
  std::unique_ptr<GradientSync> sync;
  std::optional<StopSignalHandler> stopSignal;
  std::optional<RunDirectory> dir;  // rank 0 only
  ProgressLine progress;
  nlohmann::json summary;
  std::vector<EpochStats> epochs;
  Position position;
  std::vector<StepRecord> epochRecords;  // this rank's steps of the epoch in progress
  size_t rowsWritten = 0;                // of epochRecords, those already sent to batches.csv
  std::vector<TraceEvent> trace;         // this rank's events not yet gathered
  std::vector<TraceEvent> allTrace;      // rank 0: every rank's events
  double unixMinusSteadyUs = 0;          // converts steady-clock time points to Unix microseconds
  double elapsed = 0;

  explicit State(const RunConfig& c) : config(resolveDefaults(c)), progress(c.quiet || c.rank != 0) {}

  int rank() const { return world ? world->rank() : 0; }
  int worldSize() const { return world ? world->size() : 1; }
  bool root() const { return rank() == 0; }

  StepRecord trainStep(int64_t epoch, int64_t step, bool& stop);
  void evaluate(EpochStats& stats);
  void writeSummary(const char* status, const std::string& error = "");
  EpochStats gatherEpoch(int64_t epoch, int64_t fullSteps);
  void checkParametersAgree(int64_t globalStep);
  void writeCheckpoint();
  void restoreCheckpoint();
  void broadcastInitialState();
  void writeTrafficAndTrace();
  double usOf(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count() + unixMinusSteadyUs;
  }
};

namespace {

torch::Device chooseDevice(const std::string& name) {
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw UsageError("--device cuda: this build of LibTorch has no CUDA or no GPU is visible; use --device cpu");
    }
    return torch::Device(torch::kCUDA, 0);
  }
  return torch::Device(torch::kCPU);
}

double parameterChecksum(const torch::nn::Module& model) {
  torch::NoGradGuard noGrad;
  double sum = 0;
  for (const auto& p : model.parameters()) sum += p.detach().to(torch::kDouble).sum().item<double>();
  return sum;
}

std::string doubleBytes(double value) { return std::string(reinterpret_cast<const char*>(&value), sizeof value); }

double bytesDouble(const std::string& bytes) {
  double value = 0;
  std::memcpy(&value, bytes.data(), std::min(bytes.size(), sizeof value));
  return value;
}

// The fields a resumed run must share with the run it continues.
const char* const kResumeFields[] = {"model",     "dataset",    "batch_size", "seed",      "optimizer",
                                     "lr",        "momentum",   "weight_decay", "epochs",  "max_steps",
                                     "world_size", "sync",      "drop_last",  "synthetic_train_size",
                                     "amp",       "channels_last"};

}  // namespace

Trainer::Trainer(const RunConfig& config) : state_(std::make_unique<State>(config)) {
  State& s = *state_;
  validate(s.config);
  const std::string memoryPolicy = applyMemoryPolicy();
  // Debian's LibTorch starts with one thread whatever the machine: 0 means every available core.
  at::set_num_threads(s.config.threads > 0 ? static_cast<int>(s.config.threads) : availableCores());
  if (s.config.dataOnDevice && !torch::cuda::is_available()) {
    throw UsageError("--data-on-device needs a CUDA device: this build of LibTorch has no CUDA or no GPU is visible");
  }
  s.device = chooseDevice(s.config.device);
  torch::manual_seed(s.config.seed);
  s.unixMinusSteadyUs =
      unixSeconds() * 1e6 -
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();

  if (s.config.worldSize > 1 || s.config.backend == "mpi") {
    s.world.emplace(joinWorld(s.config));
    s.config.rank = s.world->rank();
    s.config.worldSize = s.world->size();
  }
  s.stopSignal.emplace();

  s.data = loadDatasets(s.config);
  if (s.config.dataOnDevice) moveToDevice(s.data, s.device);
  models::ModelOptions modelOptions;
  modelOptions.inputChannels = s.data.train.channels();
  modelOptions.numClasses = s.data.train.numClasses;
  s.model = models::makeModel(s.config.model, modelOptions);
  s.model->to(s.device);
  if (s.config.channelsLast) toChannelsLast(*s.model);  // before anything holds the parameters' storage
  s.optimizer = makeOptimizer(s.config, s.model->parameters());
  s.ampDtype = ampDtype(s.config.amp);
  if (s.config.amp == "fp16") s.scaler = std::make_unique<GradScaler>();
  // LibTorch's DataParallel runs the replicas' forwards on at::parallel_for threads, which do not
  // inherit this thread's autocast state; with one GPU it runs the plain forward here.
  if (s.ampDtype && s.config.mode == "dp" && torch::cuda::device_count() > 1)
    throw UsageError("--amp with --mode dp over " + std::to_string(torch::cuda::device_count()) +
                     " GPUs: DataParallel's replica threads do not inherit autocast; use one process per GPU "
                     "(dtbench launch -n N -- dtbench train ...) or --amp off");

  data::LoaderOptions trainOptions;
  trainOptions.batchSize = s.config.batchSize;
  trainOptions.train = true;
  trainOptions.dropLast = s.config.dropLast;
  trainOptions.seed = s.config.seed;
  trainOptions.rank = s.config.rank;
  trainOptions.worldSize = s.config.worldSize;
  data::LoaderOptions testOptions;
  testOptions.batchSize = s.config.testBatchSize;
  testOptions.train = false;
  data::PrefetchOptions prefetch;
  prefetch.workers = s.config.workers;
  prefetch.pinMemory = s.device.is_cuda() && !s.config.dataOnDevice;  // for non-blocking copies
  s.trainLoader.emplace(s.data.train, trainOptions, prefetch);
  if (s.root()) s.testLoader.emplace(s.data.test, testOptions, prefetch);  // rank 0 evaluates

  if (s.config.resume) {
    s.restoreCheckpoint();
  } else if (s.root()) {
    s.dir.emplace(s.config.outDir);
  }
  if (s.world) {
    s.broadcastInitialState();
    s.worker = std::make_unique<CommWorker>();
    if (s.config.sync == "ssgd") {
      BucketedAllreduceOptions options;
      options.overlap = s.config.overlap;
      options.limits.bucketBytes = static_cast<int64_t>(s.config.bucketMb * 1024 * 1024);
      options.broadcastBuffers = !s.config.localBnStats;
      s.sync = std::make_unique<BucketedAllreduce>(*s.model, *s.world->communicator, *s.world->allreduce, *s.worker,
                                                   options);
    } else {
      s.sync = std::make_unique<PairAveraging>(*s.model, *s.world->communicator, *s.world->recorder, *s.worker,
                                               s.config.seed, impairmentOf(s.config));
    }
  }
  if (!s.root()) return;

  nlohmann::json configJson = toJson(s.config);
  configJson["rank"] = 0;
  configJson["environment"] = describeEnvironment();
  configJson["environment"]["allocator"] = memoryPolicy;
  if (const char* algorithm = std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm"); algorithm && s.world &&
      s.config.backend == "mpi")
    configJson["environment"]["mpi_iallreduce_algorithm"] = algorithm;  // comm/mpi_communicator.cpp's Note
  configJson["model_parameters"] = models::parameterStats(*s.model).parameters;
  configJson["train_samples"] = s.data.train.size();
  configJson["test_samples"] = s.data.test.size();
  if (s.config.mode == "dp") configJson["dp_devices"] = static_cast<int64_t>(torch::cuda::device_count());
  if (s.world) {
    configJson["hosts"] = s.world->hostNames;
    configJson["hosts_emulated"] = s.config.ranksPerHost > 0;
    // The point-to-point topologies' pipeline segment (comm/topology/executor.h); null for native.
    configJson["segment_bytes"] =
        s.world->allreduce->schedule() ? nlohmann::json(s.world->allreduce->segmentBytes()) : nlohmann::json(nullptr);
    if (auto* bucketed = dynamic_cast<BucketedAllreduce*>(s.sync.get())) {
      configJson["buckets"] = bucketed->buckets();
      configJson["bucket_elements"] = bucketed->bucketElements();
      configJson["bucket_dtypes"] = bucketed->bucketTypes();
    }
  }
  if (s.config.resume) {
    s.summary["resumed_at"].push_back(unixSeconds());
  } else {
    s.dir->writeConfig(configJson);
    s.summary = {{"model", s.config.model},
                 {"dataset", s.config.dataset},
                 {"world_size", s.config.worldSize},
                 {"batch_size", s.config.batchSize},
                 {"global_batch_size", s.config.batchSize * s.config.worldSize},
                 {"sync", s.world ? s.config.sync : "none"},
                 {"amp", s.config.amp},
                 {"loss_scale", nullptr},
                 {"skipped_steps", 0},
                 {"started_at", unixSeconds()}};
  }
  s.writeSummary("running");
}

Trainer::~Trainer() = default;

// Parameters and floating-point buffers from rank 0, so every rank starts from the same model
// (DESIGN.md, Correctness guards); on --resume this also hands rank 0's restored model to all.
void Trainer::State::broadcastInitialState() {
  std::vector<at::Tensor> tensors = model->parameters();
  for (const at::Tensor& b : floatingBuffers(*model)) tensors.push_back(b);
  at::Tensor flat = at::empty({totalElements(tensors)}, at::kFloat);
  packInto(tensors, flat);
  world->communicator->broadcast(flat, 0)->wait();
  unpackFrom(flat, tensors);
}

StepRecord Trainer::State::trainStep(int64_t epoch, int64_t step, bool& stop) {
  StepRecord r;
  r.rank = rank();
  r.epoch = epoch;
  r.step = step;
  PhaseClock clock(device);
  clock.start();
  const auto stepStart = clock.last();
  std::vector<std::pair<const char*, std::chrono::steady_clock::time_point>> marks;
  const int64_t sentBefore = world ? world->recorder->bytesSent() : 0;
  const int64_t receivedBefore = world ? world->recorder->bytesReceived() : 0;

  std::optional<data::Batch> batch = trainLoader->next();
  TORCH_CHECK(batch.has_value(), "the loader ran out of batches at step ", step, " of epoch ", epoch);
  r.dataS = clock.lap();
  marks.emplace_back("data", clock.last());

  const torch::Tensor images = inMemoryFormat(batch->images.to(device, /*non_blocking=*/true), config.channelsLast);
  const torch::Tensor labels = batch->labels.to(device, /*non_blocking=*/true);
  r.h2dS = clock.lap();
  marks.emplace_back("h2d", clock.last());

  // --mode dp: LibTorch's DataParallel replicates the model onto every visible GPU on each call,
  // scatters the batch, and gathers the outputs on GPU 0; backward flows to the original parameters
  // (BatchNorm statistics updated in the replicas are lost, as in Python's DataParallel).
  // --amp: forward and loss under autocast; backward outside it (trainer/precision.h).
  torch::Tensor logits;
  torch::Tensor loss;
  {
    const AutocastScope autocast(device.type(), ampDtype);
#if DTBENCH_TORCH_HAS_CUDA
    logits = config.mode == "dp" ? torch::nn::parallel::data_parallel(model, images) : model->forward(images);
#else
    logits = model->forward(images);  // --mode dp was refused: no CUDA in this build
#endif
    loss = torch::nn::functional::cross_entropy(logits, labels);
  }
  r.forwardS = clock.lap();
  marks.emplace_back("forward", clock.last());

  const bool stopRequested = stopSignal->requested();
  if (sync) sync->beforeBackward(position.globalStep + 1, stopRequested);
  (scaler ? scaler->scale(loss) : loss).backward();  // fp16: scaled gradients, all-reduced as they are
  r.backwardS = clock.lap();
  const auto backwardEnd = clock.last();
  marks.emplace_back("backward", backwardEnd);

  if (sync) {
    const SyncResult result = sync->afterBackward();
    clock.lap();
    marks.emplace_back("sync", clock.last());
    stop = result.stopAgreed;
    r.commTotalS = unionSeconds(result.intervals);
    auto lastCompletion = backwardEnd;
    for (const auto& interval : result.intervals) {
      lastCompletion = std::max(lastCompletion, interval.completed);
      if (config.timeline)
        trace.push_back({interval.name, "comm", rank(), 1, usOf(interval.issued),
                         std::chrono::duration<double, std::micro>(interval.completed - interval.issued).count(),
                         {{"started_us", usOf(interval.started)}, {"step", position.globalStep + 1}}});
    }
    r.commExposedS = std::chrono::duration<double>(lastCompletion - backwardEnd).count();
  } else {
    stop = stopRequested;
  }

  if (scaler) {
    // Unscaled after the all-reduce: every rank finds the same inf/NaN and skips the same steps
    // (Note [loss scaling and the all-reduce] in trainer/grad_scaler.h).
    scaler->step(*optimizer);
    scaler->update();
  } else {
    optimizer->step();
  }
  compat::zeroGradInPlace(*optimizer);
  r.optimizerS = clock.lap();
  marks.emplace_back("optimizer", clock.last());

  r.samples = labels.size(0);
  r.loss = loss.item<double>();
  r.accuracy = logits.argmax(1).eq(labels).sum().item<double>() / static_cast<double>(r.samples);
  if (world) {
    r.bytesSent = world->recorder->bytesSent() - sentBefore;
    r.bytesRecv = world->recorder->bytesReceived() - receivedBefore;
  }
  const auto stepEnd = std::chrono::steady_clock::now();
  r.stepS = std::chrono::duration<double>(stepEnd - stepStart).count();
  if (config.timeline) {
    auto from = stepStart;
    for (const auto& [name, until] : marks) {
      trace.push_back({name, "step", rank(), 0, usOf(from), std::chrono::duration<double, std::micro>(until - from).count(),
                       {{"epoch", epoch}, {"step", step}}});
      from = until;
    }
  }
  return r;
}

void Trainer::State::evaluate(EpochStats& stats) {
  if (!config.evaluate || data.test.size() == 0 || !root()) return;
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard noGrad;
  model->eval();
  testLoader->startEpoch(stats.epoch);
  int64_t correct = 0;
  int64_t seen = 0;
  while (std::optional<data::Batch> batch = testLoader->next()) {
    const AutocastScope autocast(device.type(), ampDtype);
    const torch::Tensor logits = model->forward(inMemoryFormat(batch->images.to(device), config.channelsLast));
    correct += logits.argmax(1).eq(batch->labels.to(device)).sum().item<int64_t>();
    seen += batch->labels.size(0);
  }
  model->train();
  stats.testAccuracy = static_cast<double>(correct) / static_cast<double>(seen);
  stats.evalS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Trainer::State::writeSummary(const char* status, const std::string& error) {
  if (!dir) return;
  summary["status"] = status;
  summary["updated_at"] = unixSeconds();
  if (scaler) {
    summary["loss_scale"] = scaler->lossScale();
    summary["skipped_steps"] = scaler->skippedSteps();
  }
  nlohmann::json epochRows = nlohmann::json::array();
  for (const EpochStats& e : epochs) epochRows.push_back(toJson(e));
  summary["epochs"] = epochRows;
  if (!error.empty()) summary["error"] = error;
  dir->writeSummary(summary);
}

// Collective: every rank's rows and trace events not yet sent reach rank 0, which writes them; rank 0
// returns the epoch's figures so far (its own times; loss, accuracy and samples of all ranks).
EpochStats Trainer::State::gatherEpoch(int64_t epoch, int64_t fullSteps) {
  std::string rows;
  for (size_t k = rowsWritten; k < epochRecords.size(); ++k) rows += toCsvRow(epochRecords[k]) + '\n';
  rowsWritten = epochRecords.size();
  EpochStats stats = addUp(epoch, fullSteps, epochRecords);
  nlohmann::json mine = {{"rows", rows},
                         {"loss_sum", stats.meanLoss * static_cast<double>(stats.steps)},
                         {"correct", stats.trainAccuracy * static_cast<double>(stats.samples)},
                         {"samples", stats.samples},
                         {"steps", stats.steps},
                         {"trace", encodeTraceEvents(trace)}};
  trace.clear();
  std::vector<std::string> all{mine.dump()};
  if (world) all = comm::allgatherBytes(*world->communicator, all.front());
  if (!root()) return stats;
  double lossSum = 0, correct = 0;
  int64_t samples = 0, steps = 0;
  for (const std::string& text : all) {
    const nlohmann::json part = nlohmann::json::parse(text);
    dir->appendBatchRows(part["rows"].get<std::string>());
    lossSum += numberOrNaN(part["loss_sum"]);  // NaN once training diverged
    correct += numberOrNaN(part["correct"]);
    samples += part["samples"].get<int64_t>();
    steps += part["steps"].get<int64_t>();
    if (config.timeline)
      for (TraceEvent& e : decodeTraceEvents(part["trace"].get<std::string>())) allTrace.push_back(std::move(e));
  }
  // Every rank's samples count towards throughput; loss and accuracy are over every rank's batches.
  stats.samples = samples;
  stats.meanLoss = steps ? lossSum / static_cast<double>(steps) : 0.0;
  stats.trainAccuracy = samples ? correct / static_cast<double>(samples) : 0.0;
  dir->flush();
  return stats;
}

void Trainer::State::checkParametersAgree(int64_t globalStep) {
  const double mine = parameterChecksum(*model);
  const std::vector<std::string> all = comm::allgatherBytes(*world->communicator, doubleBytes(mine));
  for (int r = 0; r < worldSize(); ++r) {
    const double theirs = bytesDouble(all[static_cast<size_t>(r)]);
    if (theirs != mine) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "--check-every: after step %lld the ranks hold different parameters (checksum %.17g on rank %d, "
                    "%.17g on rank %d); the gradient synchronization is broken",
                    static_cast<long long>(globalStep), mine, rank(), theirs, r);
      throw std::runtime_error(text);
    }
  }
}

// Collective. Rank 0 writes model, optimizer, every rank's RNG state and the run's position into
// <out>/checkpoint. Under ssgd every rank holds the same model and optimizer state, so rank 0's
// stand for all; under pairavg they differ and every rank's travel to rank 0.
void Trainer::State::writeCheckpoint() {
  if (dir) dir->flush();
  const bool perRank = config.sync == "pairavg" && world;
  nlohmann::json mine = {{"rng", captureRngState()}, {"records", nlohmann::json::array()}};
  if (scaler) mine["grad_scaler"] = scaler->state();  // per rank: under pairavg each rank keeps its own
  for (const StepRecord& r : epochRecords) mine["records"].push_back(toJson(r));
  std::vector<std::string> states{mine.dump()};
  std::vector<std::string> archives{root() || perRank ? serializeTrainingState(*model, *optimizer) : ""};
  if (world) {
    states = comm::allgatherBytes(*world->communicator, states.front());
    if (perRank) archives = comm::allgatherBytes(*world->communicator, archives.front());
  }
  if (!root()) return;
  nlohmann::json state = {{"epoch", position.epoch},
                          {"steps_done", position.stepsDone},
                          {"global_step", position.globalStep},
                          {"elapsed_s", elapsed},
                          {"history_bytes", dir->historyBytes()},
                          {"batches_bytes", dir->batchesBytes()},
                          {"summary", summary},
                          {"epochs", nlohmann::json::array()},
                          {"per_rank_models", perRank},
                          {"ranks", nlohmann::json::array()}};
  for (const EpochStats& e : epochs) state["epochs"].push_back(toJson(e));
  for (const std::string& text : states) state["ranks"].push_back(nlohmann::json::parse(text));
  std::map<std::string, std::string> files;
  for (size_t r = 0; r < archives.size(); ++r) files["rank" + std::to_string(r) + ".pt"] = archives[r];
  saveCheckpoint(dir->path(), files, state);
}

void Trainer::State::restoreCheckpoint() {
  std::string stateText;
  std::string archive;
  if (root()) {
    if (!std::filesystem::exists(config.outDir + "/config.json"))
      throw UsageError("--resume " + config.outDir + ": no run there (config.json is missing); give the --out of "
                       "the interrupted run");
    const nlohmann::json recorded = readJsonFile(config.outDir + "/config.json");
    std::string mismatches;
    const nlohmann::json now = toJson(config);
    for (const char* field : kResumeFields)
      if (recorded.contains(field) && recorded[field] != now[field])
        mismatches += std::string(mismatches.empty() ? "" : ", ") + field + " (run: " + recorded[field].dump() +
                      ", now: " + now[field].dump() + ")";
    if (!mismatches.empty())
      throw UsageError("--resume " + config.outDir + ": the flags differ from the run's: " + mismatches +
                       "; resume with the run's own flags");
    const nlohmann::json recordedSummary = readJsonFile(config.outDir + "/summary.json");
    if (recordedSummary.at("status") == "completed")
      throw UsageError("--resume " + config.outDir + ": that run already completed; start a new run with a new --out");
    LoadedCheckpoint loaded = loadCheckpoint(config.outDir);
    stateText = loaded.state.dump();
    const bool perRank = loaded.state.at("per_rank_models").get<bool>();
    archive = loaded.files.at("rank0.pt");
    if (world && perRank) {
      // Rank r's model and optimizer go to rank r (broadcast one by one: resume happens once).
      for (int r = 1; r < worldSize(); ++r) comm::broadcastBytes(*world->communicator, loaded.files.at("rank" + std::to_string(r) + ".pt"), 0);
    }
    dir.emplace(RunDirectory::reopen(config.outDir, loaded.state["history_bytes"], loaded.state["batches_bytes"]));
  }
  if (world) stateText = comm::broadcastBytes(*world->communicator, stateText, 0);
  const nlohmann::json state = nlohmann::json::parse(stateText);
  const bool perRank = state.at("per_rank_models").get<bool>();
  if (world && !root() && perRank) {
    for (int r = 1; r < worldSize(); ++r) {
      std::string bytes = comm::broadcastBytes(*world->communicator, "", 0);
      if (r == rank()) archive = std::move(bytes);
    }
  }
  if (world && !perRank) archive = comm::broadcastBytes(*world->communicator, archive, 0);
  deserializeTrainingState(archive, *model, *optimizer);
  const auto& ranks = state["ranks"];
  if (static_cast<int>(ranks.size()) != worldSize())
    throw UsageError("--resume: the checkpoint holds " + std::to_string(ranks.size()) + " ranks, this run has " +
                     std::to_string(worldSize()));
  const nlohmann::json& mine = ranks[static_cast<size_t>(rank())];
  restoreRngState(mine["rng"].get<std::string>());
  if (scaler && mine.contains("grad_scaler")) scaler->restore(mine["grad_scaler"]);
  for (const auto& r : mine["records"]) epochRecords.push_back(stepRecordFromJson(r));
  rowsWritten = epochRecords.size();
  position.epoch = state["epoch"];
  position.stepsDone = state["steps_done"];
  position.globalStep = state["global_step"];
  elapsed = state["elapsed_s"];
  if (root()) {
    summary = state["summary"];
    for (const auto& e : state["epochs"]) epochs.push_back(epochStatsFromJson(e));
  }
}

// Collective: rank 0 writes traffic.csv, traffic_timeline.csv (point-to-point topologies) and, with
// --timeline, timeline.json.
void Trainer::State::writeTrafficAndTrace() {
  if (world) {
    const comm::MergedTraffic merged = comm::gatherTraffic(*world->communicator, *world->recorder);
    if (root()) {
      dir->writeTraffic(merged);
      summary["param_checksums"] = nlohmann::json::array();
    }
    const std::vector<std::string> sums =
        comm::allgatherBytes(*world->communicator, doubleBytes(parameterChecksum(*model)));
    if (root())
      for (const std::string& bytes : sums) summary["param_checksums"].push_back(bytesDouble(bytes));
  }
  if (root() && config.timeline) writeChromeTrace(dir->path() + "/timeline.json", allTrace);
}

nlohmann::json Trainer::run() {
  State& s = *state_;
  try {
    const int64_t fullSteps = s.trainLoader->batchesPerEpoch();
    const int64_t steps = s.config.maxSteps > 0 ? std::min(s.config.maxSteps, fullSteps) : fullSteps;
    const int64_t totalSteps = steps * s.config.epochs;
    s.model->train();
    bool stopped = false;
    for (int64_t epoch = s.position.epoch; epoch <= s.config.epochs && !stopped; ++epoch) {
      s.position.epoch = epoch;
      s.trainLoader->startEpoch(epoch);
      for (int64_t skip = 0; skip < s.position.stepsDone; ++skip) s.trainLoader->next();  // resumed mid-epoch
      for (int64_t step = s.position.stepsDone + 1; step <= steps; ++step) {
        bool stop = false;
        const StepRecord r = s.trainStep(epoch, step, stop);
        s.epochRecords.push_back(r);
        ++s.position.globalStep;
        s.position.stepsDone = step;
        s.elapsed += r.stepS;
        if (s.root()) {
          s.dir->appendHistory({unixSeconds(), "Batch", epoch, s.position.globalStep, r.loss, r.accuracy,
                                r.samples * s.worldSize() / r.stepS});
          const double eta = s.elapsed / static_cast<double>(s.position.globalStep) *
                             static_cast<double>(totalSteps - s.position.globalStep);
          s.progress.update(epoch, s.config.epochs, step, steps, r.loss, r.samples * s.worldSize() / r.stepS, eta);
        }
        if (s.world && s.config.checkEvery > 0 && s.position.globalStep % s.config.checkEvery == 0)
          s.checkParametersAgree(s.position.globalStep);
        if (stop) {
          stopped = true;
          break;
        }
        const bool lastOfEpoch = step == steps;
        if (!lastOfEpoch && s.config.checkpointEvery > 0 && s.position.globalStep % s.config.checkpointEvery == 0) {
          s.gatherEpoch(epoch, fullSteps);  // rows so far reach the disk first
          s.writeCheckpoint();
        }
      }
      if (stopped) break;
      EpochStats stats = s.gatherEpoch(epoch, fullSteps);
      s.epochRecords.clear();
      s.rowsWritten = 0;
      s.progress.clear();
      s.evaluate(stats);
      if (s.root()) {
        s.dir->appendHistory({unixSeconds(), "Epoch", epoch, stats.steps, stats.meanLoss, stats.testAccuracy,
                              stats.imagesPerSec()});
        s.dir->flush();
        s.epochs.push_back(stats);
        s.writeSummary("running");
      }
      s.position.stepsDone = 0;
      s.position.epoch = epoch + 1;
      if (s.config.checkpointEvery > 0 && epoch < s.config.epochs) s.writeCheckpoint();
    }
    if (stopped) {
      // Agreed preemption: every rank stops after the same step (DESIGN.md, Signals).
      s.progress.clear();
      s.gatherEpoch(s.position.epoch, fullSteps);
      s.writeCheckpoint();
      s.writeTrafficAndTrace();
      s.summary["interrupted_at_step"] = s.position.globalStep;
      s.writeSummary("interrupted");
      s.summary["status"] = "interrupted";
      return s.summary;
    }
    s.writeTrafficAndTrace();
    s.summary["param_checksum"] = parameterChecksum(*s.model);
    s.summary["finished_at"] = unixSeconds();
    s.writeSummary("completed");
    s.summary["status"] = "completed";
    return s.summary;
  } catch (const std::exception& e) {
    s.progress.clear();
    try {
      if (s.dir) {
        for (size_t k = s.rowsWritten; k < s.epochRecords.size(); ++k)
          s.dir->appendBatch(s.epochRecords[k]);  // rank 0's own rows at least
        s.dir->flush();
      }
      s.writeSummary("failed", errorMessage(e));
    } catch (const std::exception&) {
      // The original error is the one to report; the directory may be what failed.
    }
    throw;
  }
}

}  // namespace dtbench::trainer
