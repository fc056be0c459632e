// run/config_schema.h: the rows are consistent, every rule holds for the defaults, and config.json's
// settings read back into the RunConfig they were written from.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/config_schema.h"

namespace run = dtbench::run;

namespace {

run::RunConfig valid() {
  run::RunConfig c = run::resolveDefaults(run::RunConfig{});
  c.outDir = "somewhere";
  return c;
}

}  // namespace

TEST_CASE("every row has its own key and flag, and what it needs to be read and written", "[run][schema]") {
  std::set<std::string> keys, flags;
  for (const run::Setting& s : run::settings()) {
    INFO(s.key << " " << s.flag);
    if (!s.key.empty()) CHECK(keys.insert(s.key).second);
    if (!s.flag.empty()) {
      CHECK(flags.insert(s.flag).second);
      CHECK(s.flag.rfind("--", 0) == 0);
      CHECK_FALSE(s.help.empty());
      CHECK_FALSE(s.group.empty());
    }
    if (s.recorded) {
      CHECK_FALSE(s.key.empty());
      CHECK(s.get);
      CHECK(s.set);
    }
    if (s.agreement != run::Agreement::kPerRank) {
      CHECK(s.get);
      CHECK_FALSE(s.flag.empty());  // the disagreement names the flag
    }
    if (s.type == run::ValueType::kSwitch) CHECK(s.defaultText().empty());
  }
  CHECK(run::findSettingByFlag("--bucket-mb")->key == "bucket_mb");
  CHECK(run::findSettingByKey("overlap")->flag == "--no-overlap");
  CHECK(run::findSettingByKey("no_such_key") == nullptr);
}

TEST_CASE("the defaults are the RunConfig's and keep every rule", "[run][schema]") {
  CHECK_NOTHROW(run::checkRules(valid()));
  CHECK(run::findSettingByFlag("--bucket-mb")->defaultText() == "25");
  CHECK(run::findSettingByFlag("--weight-decay")->defaultText() == "0.0005");
  CHECK(run::findSettingByFlag("--timeout")->defaultText() == "300");
  CHECK(run::findSettingByFlag("--lr")->defaultText().empty());  // by optimizer
  CHECK(run::findSettingByFlag("--lr")->help.find("0.1 sgd, 0.001 adam") != std::string::npos);
  run::RunConfig c = valid();
  c.sync.bucketMb = 0;
  CHECK_THROWS_WITH(run::checkRules(c), "--bucket-mb must be a finite number > 0 and at most 1048576 (1 TiB), got 0");
  c.sync.bucketMb = 1e30;
  CHECK_THROWS_WITH(run::checkRules(c), Catch::StartsWith("--bucket-mb must be a finite number > 0 and at most 1048576"));
  c = valid();
  c.comm.connection.glooThreads = 65;
  CHECK_THROWS_WITH(run::checkRules(c), "--gloo-threads must be in [1, 64], got 65");
}

TEST_CASE("config.json's settings read back into the settings they were written from", "[run][schema]") {
  run::RunConfig c = valid();
  c.model = "lenet";
  c.data.dataset = run::DatasetKind::kSynthetic;
  c.data.batchSize = 32;
  c.optimizer.kind = run::OptimizerKind::kAdam;
  c.precision.amp = run::Amp::kBf16;
  c.sync.kind = run::Sync::kPairavg;
  c.sync.overlap = false;
  c.sync.bucketMb = 4.5;
  c.comm.topology = dtbench::comm::Topology::parse("tree");
  c.comm.connection.backend = dtbench::comm::Backend::kMpi;
  c.comm.connection.worldSize = 4;
  c.comm.connection.messageLog = "logs";
  c.impairment.delayMs = 3;
  c.seed = 18446744073709551615ULL;
  c.commandLine = {"dtbench", "train", "--model", "lenet"};
  const nlohmann::json written = run::settingsJson(c);
  std::vector<std::string> problems;
  const run::RunConfig read = run::readSettings(written, problems);
  CHECK(problems.empty());
  CHECK(run::settingsJson(read) == written);
  CHECK(read.comm.topology.name() == "tree");
  CHECK(read.seed == c.seed);
  CHECK_FALSE(written.contains("resume"));  // not recorded: a resumed run keeps its config.json
  CHECK(written.at("message_log") == "logs");
  c.comm.connection.messageLog.clear();
  CHECK(run::settingsJson(c).at("message_log").is_null());
}

TEST_CASE("an absent key keeps its default and a mistyped one is named", "[run][schema]") {
  std::vector<std::string> problems;
  const run::RunConfig minimal = run::readSettings({{"model", "resnet18"}, {"batch_size", 128}}, problems);
  CHECK(problems.empty());
  CHECK(run::settingsJson(minimal) == run::settingsJson(run::RunConfig{}));
  // The model and the batch every config.json has held: without them the figures would rest on defaults.
  run::readSettings(nlohmann::json::object(), problems);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "config.json: model is missing");
  CHECK(problems[1] == "config.json: batch_size is missing");
  problems.clear();
  const run::RunConfig read = run::readSettings(
      {{"model", "lenet"}, {"lr", "fast"}, {"sync", "allreduce"}, {"batch_size", 1.5}, {"topology", "mesh"}, {"epochs", 3}},
      problems);
  REQUIRE(problems.size() == 4);
  CHECK_THAT(problems[0], Catch::Contains("config.json: lr: --lr takes a number, got \"fast\""));
  CHECK_THAT(problems[1], Catch::Contains("batch_size") && Catch::Contains("a whole number"));
  CHECK_THAT(problems[2], Catch::Contains("topology") && Catch::Contains("unknown topology 'mesh'"));
  CHECK_THAT(problems[3], Catch::Contains("sync") && Catch::Contains("ssgd, pairavg"));
  CHECK(read.epochs == 3);
  CHECK(read.sync.kind == run::Sync::kSsgd);
}

TEST_CASE("the agreed settings are the rows the ranks and --resume compare", "[run][schema]") {
  const nlohmann::json agreed = run::agreedSettingsJson(valid());
  CHECK(agreed.contains("lr"));
  CHECK(agreed.contains("resume"));
  CHECK(agreed.contains("world_size"));
  CHECK_FALSE(agreed.contains("threads"));
  CHECK_FALSE(agreed.contains("timeout_s"));
  CHECK_FALSE(agreed.contains("out"));
}

TEST_CASE("The step jitter setting is recorded in config.json and range-checked when read back", "[run][schema][jitter]") {
  run::RunConfig c = valid();
  c.stepJitter = run::StepJitter::parse("normal:30:10");
  const nlohmann::json written = run::settingsJson(c);
  CHECK(written.at("inject_step_jitter") == "normal:30:10");
  CHECK(run::settingsJson(run::RunConfig{}).at("inject_step_jitter") == "none");
  std::vector<std::string> problems;
  const run::RunConfig read = run::readSettings(written, problems);
  CHECK(problems.empty());
  CHECK(read.stepJitter.kind == run::StepJitter::Kind::kNormal);
  CHECK(read.stepJitter.sdMs == 10);
  // Out of range, mistyped: named, and the default (none) kept.
  for (const nlohmann::json& bad : {nlohmann::json("normal:-3:1"), nlohmann::json("exp:0"), nlohmann::json("exp:1e9"),
                                    nlohmann::json(30)}) {
    problems.clear();
    nlohmann::json config = written;
    config["inject_step_jitter"] = bad;
    const run::RunConfig kept = run::readSettings(config, problems);
    INFO(bad.dump());
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("config.json: inject_step_jitter: --inject-step-jitter"));
    CHECK_FALSE(kept.stepJitter.active());
  }
  const run::Setting* row = run::findSettingByFlag("--inject-step-jitter");
  REQUIRE(row);
  CHECK(row->defaultText() == "none");
  CHECK(row->agreement == run::Agreement::kAllRanks);
}
