#include "catch_torch.h"
#include "models/classifier.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "file_size_limit.h"
#include "models/registry.h"
#include "temp_dir.h"
#include "run/checkpoint_folder.h"
#include "run/step_record.h"
#include "trainer/checkpoint/rng_state.h"
#include "trainer/checkpoint/training_state.h"

using dtbench::testing::TempDir;
using dtbench::trainer::captureRngState;
using dtbench::run::checkpointDirectory;
using dtbench::trainer::deserializeTrainingState;
using dtbench::run::hasCheckpoint;
using dtbench::trainer::restoreRngState;
using dtbench::trainer::serializeTrainingState;
namespace fs = std::filesystem;

namespace {

// A single-model checkpoint the way the trainer writes one: rank0.pt and state.json.
void saveCheckpoint(const std::string& run, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                    const nlohmann::json& state) {
  dtbench::run::saveCheckpoint(run, {{"rank0.pt", serializeTrainingState(model, optimizer)}}, state);
}

void saveCheckpoint(const std::string& run, const std::map<std::string, std::string>& files,
                    const nlohmann::json& state) {
  dtbench::run::saveCheckpoint(run, files, state);
}

nlohmann::json loadCheckpoint(const std::string& run, torch::nn::Module& model, torch::optim::Optimizer& optimizer) {
  dtbench::run::LoadedCheckpoint loaded = dtbench::run::loadCheckpoint(run);
  deserializeTrainingState(loaded.files.at("rank0.pt"), model, optimizer, loaded.directory);
  return loaded.state;
}

// Parameters, buffers (BatchNorm's running statistics) and a child that is not serializable.
torch::nn::Sequential makeNet(uint64_t seed) {
  torch::manual_seed(seed);
  return torch::nn::Sequential(torch::nn::Linear(4, 8), torch::nn::BatchNorm1d(8),
                               torch::nn::Functional(torch::relu), torch::nn::Linear(8, 3));
}

torch::optim::SGD makeSgd(torch::nn::Module& net) {
  return torch::optim::SGD(net.parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4));
}

void trainSteps(torch::nn::Sequential& net, torch::optim::Optimizer& optimizer, int64_t firstStep, int steps) {
  for (int64_t step = firstStep; step < firstStep + steps; ++step) {
    torch::manual_seed(1000 + step);
    const auto x = torch::randn({16, 4});
    const auto y = torch::randint(0, 3, {16});
    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    optimizer.step();
  }
}

std::vector<torch::Tensor> snapshot(const torch::nn::Module& net) {
  std::vector<torch::Tensor> out;
  for (const auto& p : net.parameters()) out.push_back(p.detach().clone());
  for (const auto& b : net.buffers()) out.push_back(b.detach().clone());
  return out;
}

bool sameValues(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a checkpoint restores parameters, buffers and momentum, so training continues identically",
          "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp / "run";
  fs::create_directories(run);

  auto original = makeNet(1);
  auto originalSgd = makeSgd(*original);
  trainSteps(original, originalSgd, 0, 3);
  const auto atCheckpoint = snapshot(*original);
  saveCheckpoint(run, *original, originalSgd, {{"epoch", 2}, {"step", 3}});
  trainSteps(original, originalSgd, 3, 2);
  const auto uninterrupted = snapshot(*original);

  auto resumed = makeNet(2);
  auto resumedSgd = makeSgd(*resumed);
  std::vector<void*> storage;
  for (const auto& p : resumed->parameters()) storage.push_back(p.data_ptr());
  REQUIRE_FALSE(sameValues(snapshot(*resumed), atCheckpoint));

  REQUIRE(hasCheckpoint(run));
  const auto state = loadCheckpoint(run, *resumed, resumedSgd);
  CHECK(state == nlohmann::json{{"epoch", 2}, {"step", 3}});
  CHECK(sameValues(snapshot(*resumed), atCheckpoint));
  std::vector<void*> storageAfter;
  for (const auto& p : resumed->parameters()) storageAfter.push_back(p.data_ptr());
  CHECK(storageAfter == storage);  // loaded in place

  trainSteps(resumed, resumedSgd, 3, 2);
  CHECK(sameValues(snapshot(*resumed), uninterrupted));
}

TEST_CASE("a zoo model's parameters come back exactly", "[checkpoint]") {
  TempDir tmp;
  torch::manual_seed(3);
  auto saved = dtbench::models::makeModel("lenet", {1, 10});
  torch::optim::SGD savedSgd(saved->module().parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  saveCheckpoint(tmp.path().string(), saved->module(), savedSgd, nlohmann::json::object());

  torch::manual_seed(4);
  auto loaded = dtbench::models::makeModel("lenet", {1, 10});
  torch::optim::SGD loadedSgd(loaded->module().parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  REQUIRE_FALSE(sameValues(snapshot(loaded->module()), snapshot(saved->module())));
  CHECK(loadCheckpoint(tmp.path().string(), loaded->module(), loadedSgd) == nlohmann::json::object());
  CHECK(sameValues(snapshot(loaded->module()), snapshot(saved->module())));
}

TEST_CASE("saving again replaces the checkpoint and leaves no temporary directories", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  auto net = makeNet(1);
  auto sgd = makeSgd(*net);
  saveCheckpoint(run, *net, sgd, {{"step", 1}});
  trainSteps(net, sgd, 0, 1);
  const auto second = snapshot(*net);
  saveCheckpoint(run, *net, sgd, {{"step", 2}});
  CHECK_FALSE(fs::exists(tmp / "checkpoint.partial"));
  CHECK_FALSE(fs::exists(tmp / "checkpoint.old"));

  auto loaded = makeNet(5);
  auto loadedSgd = makeSgd(*loaded);
  CHECK(loadCheckpoint(run, *loaded, loadedSgd).at("step") == 2);
  CHECK(sameValues(snapshot(*loaded), second));
}

TEST_CASE("a crash between the two renames leaves a checkpoint that loads", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  auto net = makeNet(1);
  auto sgd = makeSgd(*net);
  saveCheckpoint(run, *net, sgd, {{"step", 1}});
  fs::rename(checkpointDirectory(run), tmp / "checkpoint.old");
  fs::create_directories(tmp / "checkpoint.partial");  // the next save's unfinished files

  REQUIRE(hasCheckpoint(run));
  auto loaded = makeNet(5);
  auto loadedSgd = makeSgd(*loaded);
  CHECK(loadCheckpoint(run, *loaded, loadedSgd).at("step") == 1);
  CHECK(sameValues(snapshot(*loaded), snapshot(*net)));

  saveCheckpoint(run, *net, sgd, {{"step", 2}});
  CHECK(fs::exists(checkpointDirectory(run)));
  CHECK_FALSE(fs::exists(tmp / "checkpoint.old"));
  CHECK_FALSE(fs::exists(tmp / "checkpoint.partial"));
}

TEST_CASE("a crash before removing checkpoint.old keeps the newer checkpoint", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  auto net = makeNet(1);
  auto sgd = makeSgd(*net);
  saveCheckpoint(run, *net, sgd, {{"step", 1}});
  fs::copy(checkpointDirectory(run), tmp / "checkpoint.old", fs::copy_options::recursive);
  saveCheckpoint(tmp / "newer", *net, sgd, {{"step", 2}});
  fs::remove_all(checkpointDirectory(run));
  fs::rename(checkpointDirectory(tmp / "newer"), checkpointDirectory(run));

  auto loaded = makeNet(5);
  auto loadedSgd = makeSgd(*loaded);
  CHECK(loadCheckpoint(run, *loaded, loadedSgd).at("step") == 2);
  saveCheckpoint(run, *net, sgd, {{"step", 3}});
  CHECK(loadCheckpoint(run, *loaded, loadedSgd).at("step") == 3);
  CHECK_FALSE(fs::exists(tmp / "checkpoint.old"));
}

TEST_CASE("a missing checkpoint is an error that names the path and what to do", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  auto net = makeNet(1);
  auto sgd = makeSgd(*net);
  CHECK_FALSE(hasCheckpoint(run));
  fs::create_directories(tmp / "checkpoint.partial");
  CHECK_FALSE(hasCheckpoint(run));
  CHECK_THROWS_WITH(loadCheckpoint(run, *net, sgd),
                    Catch::Contains(checkpointDirectory(run)) && Catch::Contains("--resume"));
}

TEST_CASE("a checkpoint of a different model is refused with the path", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  torch::nn::Linear small(4, 3);
  torch::optim::SGD smallSgd(small->parameters(), torch::optim::SGDOptions(0.1));
  saveCheckpoint(run, *small, smallSgd, {{"step", 1}});
  torch::nn::Linear wide(4, 5);
  torch::optim::SGD wideSgd(wide->parameters(), torch::optim::SGDOptions(0.1));
  CHECK_THROWS_AS(loadCheckpoint(run, *wide, wideSgd), std::runtime_error);
  CHECK_THROWS_WITH(loadCheckpoint(run, *wide, wideSgd),
                    Catch::Contains(checkpointDirectory(run)) && Catch::Contains("shape"));
}

TEST_CASE("a checkpoint of named files comes back byte for byte", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  const std::string binary("\0\x01\xff rank 1", 10);
  saveCheckpoint(run, std::map<std::string, std::string>{{"rank0.pt", "zero"}, {"rank1.pt", binary}, {"empty", ""}},
                 {{"ranks", 2}});
  const auto loaded = dtbench::run::loadCheckpoint(run);
  CHECK(loaded.directory == checkpointDirectory(run));
  CHECK(loaded.state == nlohmann::json{{"ranks", 2}});
  CHECK(loaded.files == std::map<std::string, std::string>{{"rank0.pt", "zero"}, {"rank1.pt", binary}, {"empty", ""}});

  saveCheckpoint(run, std::map<std::string, std::string>{{"rank0.pt", "again"}}, {{"ranks", 1}});
  CHECK(dtbench::run::loadCheckpoint(run).files == std::map<std::string, std::string>{{"rank0.pt", "again"}});

  for (const std::string bad : {"", ".", "..", "state.json", "a/b"}) {
    INFO(bad);
    CHECK_THROWS_AS(saveCheckpoint(run, std::map<std::string, std::string>{{bad, "x"}}, {}), std::invalid_argument);
  }
  CHECK(dtbench::run::loadCheckpoint(run).state.at("ranks") == 1);  // refused saves changed nothing
}

TEST_CASE("model and optimizer travel as one archive in memory", "[checkpoint]") {
  auto original = makeNet(1);
  auto originalSgd = makeSgd(*original);
  trainSteps(original, originalSgd, 0, 3);
  const std::string bytes = serializeTrainingState(*original, originalSgd);
  trainSteps(original, originalSgd, 3, 2);
  const auto uninterrupted = snapshot(*original);

  auto resumed = makeNet(2);
  auto resumedSgd = makeSgd(*resumed);
  deserializeTrainingState(bytes, *resumed, resumedSgd);
  trainSteps(resumed, resumedSgd, 3, 2);
  CHECK(sameValues(snapshot(*resumed), uninterrupted));

  torch::nn::Linear other(4, 3);
  torch::optim::SGD otherSgd(other->parameters(), torch::optim::SGDOptions(0.1));
  CHECK_THROWS_WITH(deserializeTrainingState(bytes, *other, otherSgd, "rank0.pt"),
                    Catch::Contains("rank0.pt") && Catch::Contains("--model"));
  CHECK_THROWS_AS(deserializeTrainingState("not an archive", *other, otherSgd), std::runtime_error);
}

TEST_CASE("a cut-short or empty archive is named as damaged, not blamed on the flags", "[checkpoint]") {
  auto net = makeNet(1);
  auto sgd = makeSgd(*net);
  const std::string bytes = serializeTrainingState(*net, sgd);
  for (const std::string& damaged : {bytes.substr(0, bytes.size() / 2), bytes.substr(0, bytes.size() - 1),
                                     std::string(), std::string("not an archive")}) {
    INFO(damaged.size() << " of " << bytes.size() << " bytes");
    auto other = makeNet(2);
    auto otherSgd = makeSgd(*other);
    CHECK_THROWS_WITH(deserializeTrainingState(damaged, *other, otherSgd, "run/checkpoint/rank0.pt"),
                      Catch::Contains("run/checkpoint/rank0.pt is truncated or unreadable") &&
                          Catch::Contains("damaged") && !Catch::Contains("--model"));
    CHECK_THROWS_WITH(dtbench::trainer::checkTrainingStateReadable(damaged, "run/checkpoint/rank0.pt"),
                      Catch::Contains("run/checkpoint/rank0.pt is truncated or unreadable"));
  }
  CHECK_NOTHROW(dtbench::trainer::checkTrainingStateReadable(bytes, "rank0.pt"));
}

TEST_CASE("a save that runs out of space leaves the previous checkpoint and no partial files", "[checkpoint]") {
  TempDir tmp;
  const std::string run = tmp.path().string();
  const std::map<std::string, std::string> big{{"rank0.pt", std::string(64 * 1024, 'b')}};
  SECTION("after an earlier checkpoint") {
    const std::map<std::string, std::string> first{{"rank0.pt", std::string(1000, 'a')}};
    saveCheckpoint(run, first, {{"step", 1}});
    {
      // A file of 64 KiB cannot be written past a 16 KiB limit: EFBIG, as a full disk gives ENOSPC.
      const dtbench::testing::FileSizeLimit limit(16 * 1024);
      CHECK_THROWS_WITH(saveCheckpoint(run, big, {{"step", 2}}),
                        Catch::Contains("checkpoint.partial/rank0.pt") && Catch::Contains(std::strerror(EFBIG)) &&
                            Catch::Contains("the previous one in " + checkpointDirectory(run) + " is intact"));
    }
    CHECK_FALSE(fs::exists(tmp / "checkpoint.partial"));
    CHECK_FALSE(fs::exists(tmp / "checkpoint.old"));
    const auto loaded = dtbench::run::loadCheckpoint(run);
    CHECK(loaded.state.at("step") == 1);
    CHECK(loaded.files == first);
  }
  SECTION("as the first one") {
    {
      const dtbench::testing::FileSizeLimit limit(16 * 1024);
      CHECK_THROWS_WITH(saveCheckpoint(run, big, {{"step", 1}}),
                        Catch::Contains("rank0.pt") && Catch::Contains("there is no earlier one"));
    }
    CHECK_FALSE(hasCheckpoint(run));
    CHECK(fs::is_empty(tmp.path()));
  }
}

TEST_CASE("restoring the RNG state repeats the same random numbers", "[checkpoint][rng]") {
  torch::manual_seed(11);
  torch::randn({3});  // leaves a cached normal sample behind, which is state too
  const std::string state = captureRngState();
  CHECK(state.rfind("cpu=", 0) == 0);
  const auto uniform = torch::rand({8});
  const auto normal = torch::randn({5});
  const auto permutation = torch::randperm(20);

  torch::manual_seed(12);
  restoreRngState(state);
  CHECK(torch::equal(torch::rand({8}), uniform));
  CHECK(torch::equal(torch::randn({5}), normal));
  CHECK(torch::equal(torch::randperm(20), permutation));
  CHECK(captureRngState() != state);
}

TEST_CASE("a malformed RNG state is refused and changes nothing", "[checkpoint][rng]") {
  CHECK_NOTHROW(dtbench::trainer::checkRngState(captureRngState()));
  const std::string good = captureRngState();
  const std::string cpu = good.substr(0, good.find(';'));
  for (const std::string& bad : {std::string(), std::string("cpu"), std::string("cpu="), std::string("cpu=0"),
                                std::string("cpu=zz"), std::string("cpu=00"), std::string("gpu=00"),
                                cpu + ";" + cpu, cpu + ";", "cuda0=00;" + cpu, cpu + ";cuda=00",
                                cpu + ";cuda99999999999=00", cpu.substr(0, cpu.size() - 2) + "g0"}) {
    INFO(bad.substr(0, 40));
    CHECK_THROWS_AS(restoreRngState(bad), std::invalid_argument);
    CHECK_THROWS_AS(dtbench::trainer::checkRngState(bad), std::invalid_argument);
    CHECK(captureRngState() == good);
  }
}

// A diverged step's loss is NaN, which JSON writes as null: the step record a checkpoint holds
// must read back, so that a run checkpointed after it diverged can still be resumed.
TEST_CASE("a step record with a NaN loss survives the checkpoint's JSON", "[checkpoint]") {
  dtbench::run::StepRecord r;
  r.step = 3;
  r.stepS = 0.25;
  r.loss = std::numeric_limits<double>::quiet_NaN();
  r.accuracy = 0.5;
  const nlohmann::json text = nlohmann::json::parse(dtbench::run::toJson(r).dump());
  REQUIRE(text.at("loss").is_null());
  const dtbench::run::StepRecord back = dtbench::run::stepRecordFromJson(text);
  CHECK(std::isnan(back.loss));
  CHECK(back.accuracy == 0.5);
  CHECK(back.step == 3);
  CHECK(back.stepS == 0.25);
}

// Checkpoints written until 0ad05bc held a step as an array of 16 numbers (batches.csv's columns,
// then loss and accuracy): --resume of such a checkpoint reads them as they were.
TEST_CASE("a step record of an earlier checkpoint's array reads back", "[checkpoint]") {
  const nlohmann::json earlier = nlohmann::json::parse(
      "[1, 2, 3, 32, 0.01, null, 0.02, 0.03, 0.04, 0.005, 0.001, 0.25, 4096, 2048, null, 0.5]");
  const dtbench::run::StepRecord back = dtbench::run::stepRecordFromJson(earlier);
  CHECK(back.rank == 1);
  CHECK(back.epoch == 2);
  CHECK(back.step == 3);
  CHECK(back.samples == 32);
  CHECK(back.dataS == 0.01);
  CHECK(std::isnan(back.h2dS));
  CHECK(back.forwardS == 0.02);
  CHECK(back.backwardS == 0.03);
  CHECK(back.commTotalS == 0.04);
  CHECK(back.commExposedS == 0.005);
  CHECK(back.optimizerS == 0.001);
  CHECK(back.stepS == 0.25);
  CHECK(back.bytesSent == 4096);
  CHECK(back.bytesRecv == 2048);
  CHECK(std::isnan(back.loss));
  CHECK(back.accuracy == 0.5);
  // Written again, it takes the object form, which reads back the same.
  const dtbench::run::StepRecord again = dtbench::run::stepRecordFromJson(dtbench::run::toJson(back));
  CHECK(again.bytesRecv == 2048);
  CHECK(std::isnan(again.h2dS));
  // A checkpoint written before a phase column existed: that phase reads 0; a count must be there.
  nlohmann::json older = dtbench::run::toJson(back);
  older.erase("optimizer_s");
  CHECK(dtbench::run::stepRecordFromJson(older).optimizerS == 0);
  older.erase("samples");
  CHECK_THROWS(dtbench::run::stepRecordFromJson(older));
}
