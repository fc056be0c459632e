#include "catch_torch.h"

#include "comm/gloo_fixture.h"
#include "common/usage_error.h"
#include "run/config_schema.h"
#include "trainer/config.h"
#include "trainer/config_agreement.h"
#include "trainer/record/config_json.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace dtbench::trainer;

namespace {

RunConfig agreedConfig() {
  RunConfig c = resolveDefaults(RunConfig{});
  c.outDir = "somewhere";
  return c;
}

}  // namespace

TEST_CASE("ranks with the same shared settings agree", "[config_agreement]") {
  const nlohmann::json same = sharedSettingsJson(agreedConfig());
  CHECK(describeDisagreement({same}).empty());
  CHECK(describeDisagreement({same, same, same}).empty());
  CHECK(describeDisagreement({}).empty());
}

TEST_CASE("a disagreement names each flag and the ranks with each value", "[config_agreement]") {
  RunConfig c = valid();
  const nlohmann::json rank0 = sharedSettingsJson(c);
  c.optimizer.lr = 0.5;
  c.optimizer.kind = OptimizerKind::kAdam;
  c.model = "lenet";
  const nlohmann::json rank1 = sharedSettingsJson(c);
  const std::string message = describeDisagreement({rank0, rank1});
  CHECK(message ==
        "the ranks disagree on --model (rank 0: resnet18; rank 1: lenet), --optimizer (rank 0: sgd; rank 1: adam), "
        "--lr (rank 0: 0.1; rank 1: 0.5); every rank must run with the same flags");
}

TEST_CASE("ranks holding the same value are listed together, in runs", "[config_agreement]") {
  nlohmann::json a = {{"seed", 1}};
  nlohmann::json b = {{"seed", 7}};
  const std::string message = describeDisagreement({a, a, a, b, a, b, b});
  CHECK(message ==
        "the ranks disagree on --seed (ranks 0-2, 4: 1; ranks 3, 5-6: 7); every rank must run with the "
        "same flags");
}

TEST_CASE("a key missing on a rank, or an unreadable rank, counts as a value of its own", "[config_agreement]") {
  const nlohmann::json full = {{"seed", 1}, {"amp", "off"}};
  const nlohmann::json partial = {{"seed", 1}};
  CHECK(describeDisagreement({full, partial}) ==
        "the ranks disagree on --amp (rank 0: off; rank 1: absent); every rank must run with the same flags");
  const nlohmann::json unreadable = nlohmann::json(nlohmann::json::value_t::discarded);
  const std::string message = describeDisagreement({full, unreadable});
  CHECK(message.find("--seed (rank 0: 1; rank 1: absent)") != std::string::npos);
  CHECK(message.find("--amp (rank 0: off; rank 1: absent)") != std::string::npos);
}

TEST_CASE("a flag named unlike its key shows the key with the value", "[config_agreement]") {
  RunConfig c = valid();
  const nlohmann::json overlapped = sharedSettingsJson(c);
  c.sync.overlap = false;
  CHECK(describeDisagreement({overlapped, sharedSettingsJson(c)}) ==
        "the ranks disagree on --no-overlap (rank 0: overlap=true; rank 1: overlap=false); every rank must run with "
        "the same flags");
}

TEST_CASE("every setting that changes the result or the collectives is shared and per-rank ones are not",
          "[config_agreement]") {
  const RunConfig base = valid();
  const nlohmann::json reference = sharedSettingsJson(base);
  auto disagreement = [&](void (*change)(RunConfig&)) {
    RunConfig c = base;
    change(c);
    return describeDisagreement({reference, sharedSettingsJson(c)});
  };
  CHECK_THAT(disagreement([](RunConfig& c) { c.optimizer.momentum = 0.5; }), Catch::Contains("--momentum"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.optimizer.weightDecay = 0; }), Catch::Contains("--weight-decay"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.seed = 99; }), Catch::Contains("--seed"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.precision.amp = Amp::kBf16; }), Catch::Contains("--amp"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.data.batchSize = 3; }), Catch::Contains("--batch-size"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.epochs = 9; }), Catch::Contains("--epochs"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.maxSteps = 9; }), Catch::Contains("--max-steps"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.sync.kind = Sync::kPairavg; }), Catch::Contains("--sync"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.comm.topology = dtbench::comm::Topology::parse("ring"); }),
             Catch::Contains("--topology"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.checkpointEvery = 5; }), Catch::Contains("--checkpoint-every"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.sync.bucketMb = 1; }), Catch::Contains("--bucket-mb"));
  CHECK_THAT(disagreement([](RunConfig& c) { c.resume = true; }), Catch::Contains("--resume"));
  // batches.csv's phases are timed one way per run: a resumed run's rows must say what config.json says.
  CHECK_THAT(disagreement([](RunConfig& c) { c.gpu.phaseTiming = dtbench::run::PhaseTiming::kNone; }),
             Catch::Contains("--phase-timing"));
  CHECK_THAT(dtbench::run::describeResumeChanges(dtbench::run::settingsJson(base), [&] {
               RunConfig c = base;
               c.gpu.phaseTiming = dtbench::run::PhaseTiming::kNone;
               return c;
             }()),
             Catch::Contains("--phase-timing (phase_timing in the run's config.json: \"events\", now: \"none\")"));
  // How a rank loads, computes and connects may differ.
  CHECK(disagreement([](RunConfig& c) { c.threads = 7; }).empty());
  CHECK(disagreement([](RunConfig& c) { c.data.workers = 0; }).empty());
  CHECK(disagreement([](RunConfig& c) { c.data.dir = "/elsewhere"; }).empty());
  CHECK(disagreement([](RunConfig& c) { c.comm.connection.timeoutS = 5; }).empty());
  CHECK(disagreement([](RunConfig& c) { c.comm.connection.glooIface = "eth1"; }).empty());
  CHECK(disagreement([](RunConfig& c) { c.outDir = "elsewhere"; }).empty());
}

TEST_CASE("the shared settings are config.json's keys under their flags", "[config_agreement]") {
  const nlohmann::json configJson = dtbench::run::settingsJson(agreedConfig());
  std::set<std::string> keys;
  for (const SharedSetting& setting : sharedSettings()) {
    INFO(setting.key);
    CHECK(keys.insert(setting.key).second);
    CHECK(std::string(setting.flag).rfind("--", 0) == 0);
    // --resume alone is no field of config.json; the resume check reads only fields that are.
    CHECK((configJson.contains(setting.key) || std::string(setting.key) == "resume"));
    if (setting.unchangedOnResume) CHECK(configJson.contains(setting.key));
  }
}

TEST_CASE("ranks that read different link rates from cluster.json are refused, alike on every rank",
          "[config_agreement]") {
  using dtbench::comm::Communicator;
  const RunConfig config = valid();
  // The same rate, or none on every rank: agreed.
  const std::vector<int> agreed = dtbench::comm::testing::runGlooRanks<int>(2, [&](Communicator& c) {
    checkRanksAgree(c, config, 200e6);
    checkRanksAgree(c, config, std::nullopt);
    return 1;
  });
  CHECK(agreed == std::vector<int>{1, 1});
  // Rank 1 reads none (another DTBENCH_CLUSTER): both ranks refuse, naming each rank's rate.
  const std::vector<std::string> refused = dtbench::comm::testing::runGlooRanks<std::string>(2, [&](Communicator& c) {
    try {
      checkRanksAgree(c, config, c.rank() == 0 ? std::optional<double>(200e6) : std::nullopt);
    } catch (const dtbench::common::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("agreed");
  });
  for (const std::string& message : refused) {
    CHECK_THAT(message, Catch::Contains("different link rates"));
    CHECK_THAT(message, Catch::Contains("rank 0: 200 Mbit/s"));
    CHECK_THAT(message, Catch::Contains("rank 1: none"));
    CHECK_THAT(message, Catch::Contains("DTBENCH_CLUSTER"));
  }
}
