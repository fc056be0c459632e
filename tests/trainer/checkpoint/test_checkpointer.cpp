// --resume through the Checkpointer on one rank: a checkpoint of a run directory as the trainer
// leaves it, then restored as written, after hand edits of checkpoint/state.json, with its model
// file missing or cut short, and while another process owns the directory. Every refusal names the
// file and the key and leaves the run directory as it was.

#include "catch_torch.h"
#include "models/classifier.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "models/registry.h"
#include "common/usage_error.h"
#include "temp_dir.h"
#include "trainer/checkpoint/checkpointer.h"
#include "run/config_schema.h"
#include "trainer/config.h"
#include "trainer/record/config_json.h"
#include "run/run_directory.h"
#include "trainer/record/run_recorder.h"
#include "run/step_record.h"

namespace run = dtbench::run;

using dtbench::testing::TempDir;
using dtbench::trainer::Checkpointer;
using dtbench::trainer::RunConfig;
using dtbench::run::RunDirectory;
using dtbench::run::RunDirectoryLock;
using dtbench::trainer::RunPosition;
using dtbench::trainer::RunRecorder;
using dtbench::run::StepRecord;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kEpochs = 2;
constexpr int64_t kStepsPerEpoch = 3;

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeText(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

// A model and optimizer built as the trainer builds them; `seed` sets the initial weights.
struct Training {
  explicit Training(uint64_t seed) {
    torch::manual_seed(seed);
    model = dtbench::models::makeModel("lenet", {1, 10});
    optimizer = std::make_unique<torch::optim::SGD>(model->module().parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  }
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : model->module().parameters()) out.push_back(p.detach().clone());
    return out;
  }
  dtbench::models::ClassifierPtr model;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

// A one-rank run that finished epoch 1 and two steps of epoch 2, then wrote its checkpoint the way
// the trainer does (rows gathered to disk first), and stopped without completing.
class CheckpointedRun {
 public:
  CheckpointedRun() : out_(tmp_ / "run") {
    config_.model = "lenet";
    config_.epochs = kEpochs;
    config_.outDir = out_;
    Training training(1);
    RunRecorder recorder(config_, nullptr, c10::Device(c10::kCPU), nullptr);
    recorder.open(run::RunDirectory(out_));
    recorder.begin(dtbench::run::settingsJson(config_));
    Checkpointer checkpointer(config_, nullptr, training.model->module(), *training.optimizer, nullptr, recorder);
    int64_t globalStep = 0;
    for (int64_t step = 1; step <= kStepsPerEpoch; ++step) recorder.addStep(record(1, step), ++globalStep);
    recorder.endEpoch(recorder.gatherEpoch(1, kStepsPerEpoch));
    for (int64_t step = 1; step <= 2; ++step) recorder.addStep(record(2, step), ++globalStep);
    recorder.gatherEpoch(2, kStepsPerEpoch);
    checkpointer.write({2, 2, globalStep, 0.25});
    saved_ = training.parameters();
  }

  const std::string& out() const { return out_; }
  fs::path state() const { return fs::path(out_) / "checkpoint" / "state.json"; }
  fs::path rank0() const { return fs::path(out_) / "checkpoint" / "rank0.pt"; }
  const std::vector<torch::Tensor>& savedParameters() const { return saved_; }

  nlohmann::json readState() const {
    std::ifstream in(state());
    return nlohmann::json::parse(in);
  }
  void editState(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json edited = readState();
    edit(edited);
    writeText(state(), edited.dump(1));
  }

  // --resume into a fresh model; returns where the run stands. `training` receives the model.
  RunPosition resume(Training& training) const {
    RunConfig config = config_;
    config.resume = true;
    RunRecorder recorder(config, nullptr, c10::Device(c10::kCPU), nullptr);
    Checkpointer checkpointer(config, nullptr, training.model->module(), *training.optimizer, nullptr, recorder);
    return checkpointer.restore(config.data.syntheticTrainSize);
  }
  RunPosition resume() const {
    Training training(2);
    return resume(training);
  }

  // Every file of the run directory but the lock file, by name (what a refused --resume must not change).
  std::map<std::string, std::string> files() const {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(out_)) {
      if (entry.is_regular_file() && entry.path().filename() != "dtbench.lock")
        out[fs::relative(entry.path(), out_).string()] = readText(entry.path());
    }
    return out;
  }

 private:
  static run::StepRecord record(int64_t epoch, int64_t step) {
    run::StepRecord r;
    r.epoch = epoch;
    r.step = step;
    r.samples = 8;
    r.stepS = 0.05;
    r.loss = 2.0;
    r.accuracy = 0.125;
    return r;
  }

  TempDir tmp_;
  std::string out_;
  RunConfig config_;
  std::vector<torch::Tensor> saved_;
};

bool sameTensors(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("a checkpoint as written resumes at its position with its parameters", "[checkpointer]") {
  const CheckpointedRun run;
  Training training(2);
  REQUIRE_FALSE(sameTensors(training.parameters(), run.savedParameters()));
  const RunPosition position = run.resume(training);
  CHECK(position.epoch == 2);
  CHECK(position.stepsDone == 2);
  CHECK(position.globalStep == kStepsPerEpoch + 2);
  CHECK(position.elapsedS == 0.25);
  CHECK(sameTensors(training.parameters(), run.savedParameters()));
}

TEST_CASE("a state.json field that is missing is named, and the run directory stays as it was", "[checkpointer]") {
  const CheckpointedRun run;
  const auto before = run.files();
  for (const char* key : {"summary", "ranks", "epoch", "steps_done", "global_step", "elapsed_s", "per_rank_models",
                          "epochs", "history_bytes", "batches_bytes"}) {
    INFO("without \"" << key << "\"");
    run.editState([&](nlohmann::json& state) { state.erase(key); });
    CHECK_THROWS_WITH(run.resume(), Catch::Contains("checkpoint/state.json") &&
                                        Catch::Contains(std::string("\"") + key + "\" is missing") &&
                                        Catch::Contains("new --out"));
    auto after = run.files();
    after.erase("checkpoint/state.json");
    auto expected = before;
    expected.erase("checkpoint/state.json");
    CHECK(after == expected);
    writeText(run.state(), before.at("checkpoint/state.json"));
  }
  CHECK(run.resume().globalStep == kStepsPerEpoch + 2);  // the restored file still resumes
}

TEST_CASE("a field of a rank in state.json that is missing or mistyped is named", "[checkpointer]") {
  const CheckpointedRun run;
  const std::string original = readText(run.state());
  struct Edit {
    const char* key;
    const char* problem;
    std::function<void(nlohmann::json&)> apply;
  };
  const std::vector<Edit> edits = {
      {"ranks[0].rng", "is missing", [](nlohmann::json& s) { s["ranks"][0].erase("rng"); }},
      {"ranks[0].records", "is missing", [](nlohmann::json& s) { s["ranks"][0].erase("records"); }},
      {"ranks[0].rng", "must be string", [](nlohmann::json& s) { s["ranks"][0]["rng"] = 5; }},
      {"ranks[0].rng", "not an RNG state", [](nlohmann::json& s) { s["ranks"][0]["rng"] = "cpu=zz"; }},
      {"ranks[0].records", "holds 1 steps, but steps_done is 2",
       [](nlohmann::json& s) { s["ranks"][0]["records"].erase(1); }},
      {"ranks[0].records[1]", "is not a step record", [](nlohmann::json& s) { s["ranks"][0]["records"][1] = "x"; }},
      {"ranks[0]", "must be an object", [](nlohmann::json& s) { s["ranks"][0] = 3; }},
      {"ranks", "holds 2 ranks, but the last segment ran 1", [](nlohmann::json& s) { s["ranks"].push_back(s["ranks"][0]); }},
      {"ranks", "must be array", [](nlohmann::json& s) { s["ranks"] = nlohmann::json::object(); }},
      {"epoch", "must be an integer", [](nlohmann::json& s) { s["epoch"] = "2"; }},
      {"summary", "must be object", [](nlohmann::json& s) { s["summary"] = 1; }},
      {"epochs[0]", "is not an epoch's figures", [](nlohmann::json& s) { s["epochs"][0].erase("steps"); }},
      {"per_rank_models", "must be boolean", [](nlohmann::json& s) { s["per_rank_models"] = 0; }},
      {"sync_state", "must be boolean", [](nlohmann::json& s) { s["sync_state"] = "yes"; }},
      {"elapsed_s", "must be", [](nlohmann::json& s) { s["elapsed_s"] = nullptr; }},
  };
  for (const Edit& edit : edits) {
    INFO(edit.key << " " << edit.problem);
    run.editState(edit.apply);
    CHECK_THROWS_WITH(run.resume(), Catch::Contains("checkpoint/state.json: \"" + std::string(edit.key) + "\"") &&
                                        Catch::Contains(edit.problem));
    writeText(run.state(), original);
  }
}

TEST_CASE("hand-edited positions and log sizes that do not fit the run are refused by name", "[checkpointer]") {
  const CheckpointedRun run;
  const auto before = run.files();
  const nlohmann::json state = run.readState();
  const int64_t historyBytes = state.at("history_bytes").get<int64_t>();
  const int64_t batchesBytes = state.at("batches_bytes").get<int64_t>();
  struct Edit {
    const char* key;
    const char* problem;
    std::function<void(nlohmann::json&)> apply;
  };
  const std::vector<Edit> edits = {
      {"epoch", "is 99, beyond this run's --epochs 2", [](nlohmann::json& s) { s["epoch"] = 99; }},
      {"epoch", "less than 1", [](nlohmann::json& s) { s["epoch"] = 0; }},
      {"epochs", "holds 1 finished epochs, but \"epoch\" 1 means 0", [](nlohmann::json& s) { s["epoch"] = 1; }},
      {"global_step", "is 7, but the finished epochs' 3 steps and steps_done 2 add up to 5",
       [](nlohmann::json& s) { s["global_step"] = 7; }},
      {"steps_done", "less than 0", [](nlohmann::json& s) { s["steps_done"] = -1; }},
      {"history_bytes", "byte 0 is not the end of a line", [](nlohmann::json& s) { s["history_bytes"] = 0; }},
      {"history_bytes", "train_history.log: the file holds only",
       [&](nlohmann::json& s) { s["history_bytes"] = historyBytes + 1000; }},
      {"history_bytes", "not the end of a line", [&](nlohmann::json& s) { s["history_bytes"] = historyBytes - 3; }},
      {"batches_bytes", "hold the header and 4 rows, not 5",
       [&](nlohmann::json& s) {
         // at a line end, but one row short of the checkpoint's steps
         const std::string csv =
             readText(fs::path(run.out()) / "batches.csv").substr(0, static_cast<size_t>(batchesBytes));
         s["batches_bytes"] = csv.rfind('\n', csv.size() - 2) + 1;
       }},
      {"batches_bytes", "less than 0", [](nlohmann::json& s) { s["batches_bytes"] = -5; }},
  };
  for (const Edit& edit : edits) {
    INFO(edit.key << " " << edit.problem);
    run.editState(edit.apply);
    CHECK_THROWS_WITH(run.resume(), Catch::Contains("checkpoint/state.json: \"" + std::string(edit.key) + "\"") &&
                                        Catch::Contains(edit.problem));
    auto after = run.files();
    after.erase("checkpoint/state.json");
    auto expected = before;
    expected.erase("checkpoint/state.json");
    CHECK(after == expected);  // the logs were not cut
    writeText(run.state(), before.at("checkpoint/state.json"));
  }
}

TEST_CASE("a missing or cut-short rank0.pt is named as such, not blamed on the flags", "[checkpointer]") {
  const CheckpointedRun run;
  const std::string archive = readText(run.rank0());
  auto logs = run.files();
  logs.erase("checkpoint/rank0.pt");
  SECTION("missing") {
    fs::remove(run.rank0());
    CHECK_THROWS_WITH(run.resume(), Catch::Contains("checkpoint/rank0.pt is missing") && !Catch::Contains("map::at"));
  }
  SECTION("truncated") {
    writeText(run.rank0(), archive.substr(0, archive.size() / 2));
    CHECK_THROWS_WITH(run.resume(),
                      Catch::Contains("checkpoint/rank0.pt is truncated or unreadable") && !Catch::Contains("--model"));
  }
  SECTION("empty") {
    writeText(run.rank0(), "");
    CHECK_THROWS_WITH(run.resume(), Catch::Contains("checkpoint/rank0.pt is truncated or unreadable"));
  }
  auto after = run.files();
  after.erase("checkpoint/rank0.pt");
  CHECK(after == logs);  // the logs were not cut
}

TEST_CASE("a --resume into a directory another process owns is refused at once", "[checkpointer]") {
  const CheckpointedRun run;
  const auto before = run.files();
  {
    const run::RunDirectoryLock owner(run.out());
    CHECK_THROWS_WITH(run.resume(),
                      Catch::Contains("is in use by a running dtbench (pid " + std::to_string(::getpid()) + ", host "));
  }
  CHECK(run.files() == before);
  CHECK(run.resume().globalStep == kStepsPerEpoch + 2);  // released with its owner
}

// --resume at another world size: the next segment's batch and learning rate, and the steps of an epoch
// continued from a consumed prefix (trainer/checkpoint/checkpointer.h).
TEST_CASE("a resume at another world size keeps the global batch, or scales the lr with it", "[checkpointer][resize]") {
  using dtbench::trainer::RunSegment;
  RunSegment four;
  four.worldSize = 4;
  four.batchSize = 8;
  four.globalBatchSize = 32;
  four.lr = 0.1;
  const RunSegment two = dtbench::trainer::nextSegment(four, 2, 2, 41, false);
  CHECK(two.firstGlobalStep == 41);
  CHECK(two.worldSize == 2);
  CHECK(two.batchSize == 16);
  CHECK(two.globalBatchSize == 32);
  CHECK(two.lr == 0.1);
  CHECK(dtbench::trainer::nextSegment(two, 8, 4, 60, false).batchSize == 4);
  // A segment's resize latency is its own: the next one starts without the times of the one before.
  RunSegment timed = two;
  timed.previousStepAt = 100.0;
  timed.firstStepAt = 104.5;
  const RunSegment after = dtbench::trainer::nextSegment(timed, 4, 4, 60, false);
  CHECK_FALSE(after.previousStepAt);
  CHECK_FALSE(after.firstStepAt);
  CHECK_FALSE(after.resizeLatencyS());
  try {
    dtbench::trainer::nextSegment(four, 3, 3, 41, false);
    FAIL("3 ranks cannot share a global batch of 32");
  } catch (const dtbench::common::UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("resume with 2 or 4 ranks") != std::string::npos);
    CHECK(what.find("--allow-global-batch-change") != std::string::npos);
  }
  const RunSegment three = dtbench::trainer::nextSegment(four, 3, 3, 41, true);
  CHECK(three.batchSize == 8);
  CHECK(three.globalBatchSize == 24);
  CHECK(three.lr == Approx(0.1 * 24 / 32));
  // 4096 samples: 4 x 8 took 10 steps (320 positions); 2 x 16 deal the other 3776, 118 batches each.
  CHECK(dtbench::trainer::epochStepsFrom(4096, 320, 10, 2, 16, false, 0) == 10 + 118);
  CHECK(dtbench::trainer::epochStepsFrom(4096, 0, 0, 4, 8, false, 0) == 128);  // a whole epoch
  CHECK(dtbench::trainer::epochStepsFrom(4096, 320, 10, 2, 16, false, 50) == 50);  // --max-steps caps the total
  CHECK(dtbench::trainer::epochStepsFrom(4096, 4096, 128, 2, 16, false, 0) == 128);  // nothing left to deal
  // 203 samples, drop-last: 3 ranks x 5 took 2 steps (30 positions); 173 over 2 ranks, 86 each, 17 batches.
  CHECK(dtbench::trainer::epochStepsFrom(203, 30, 2, 2, 5, true, 0) == 2 + 17);
}
