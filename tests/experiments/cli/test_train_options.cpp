#include "catch_torch.h"
#include "common/usage_error.h"
#include "trainer/config.h"

#include "experiments/cli/train_options.h"

#include <string>
#include <vector>

using dtbench::experiments::parseTrainOptions;
using dtbench::common::UsageError;

namespace {

std::string errorOf(const std::vector<std::string>& args) {
  try {
    parseTrainOptions(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("flags land in the configuration", "[cli]") {
  const auto parsed = parseTrainOptions({"--model", "MobileNetV2", "--dataset", "synthetic", "--batch-size", "64",
                                         "--epochs", "3", "--max-steps", "7", "--lr", "0.05", "--seed", "9",
                                         "--threads", "1", "--drop-last", "--no-eval", "--quiet", "--out", "d"});
  REQUIRE_FALSE(parsed.help);
  const auto& c = parsed.config;
  CHECK(c.model == "MobileNetV2");
  CHECK(c.data.dataset == dtbench::trainer::DatasetKind::kSynthetic);
  CHECK(c.data.batchSize == 64);
  CHECK(c.epochs == 3);
  CHECK(c.maxSteps == 7);
  CHECK(c.optimizer.lr == 0.05);
  CHECK(c.optimizer.momentum == 0.9);  // sgd's default
  CHECK(c.seed == 9);
  CHECK(c.threads == 1);
  CHECK(c.data.dropLast);
  CHECK_FALSE(c.evaluate);
  CHECK(c.quiet);
  CHECK(c.outDir == "d");
  CHECK(c.commandLine.front() == "dtbench");
  CHECK(c.commandLine.back() == "d");
}

TEST_CASE("help is not an error", "[cli]") {
  const auto parsed = parseTrainOptions({"--help"});
  CHECK(parsed.help);
  CHECK_THAT(parsed.helpText, Catch::Contains("--batch-size") && Catch::Contains("--max-steps"));
}

TEST_CASE("bad command lines name what to fix", "[cli]") {
  CHECK_THAT(errorOf({"--out", "d", "--batch-size", "0"}), Catch::Contains("--batch-size"));
  CHECK_THAT(errorOf({"--out", "d", "--lr", "-0.1"}), Catch::Contains("--lr"));
  CHECK_THAT(errorOf({"--out", "d", "--momentum", "-1"}), Catch::Contains("--momentum"));
  CHECK_THAT(errorOf({"--out", "d", "--batch-size", "many"}), Catch::Contains("many"));
  CHECK_THAT(errorOf({"--out", "d", "--frobnicate"}), Catch::Contains("frobnicate"));
  CHECK_THAT(errorOf({"--out", "d", "extra"}), Catch::Contains("extra"));
  CHECK_THAT(errorOf({"--out", "d", "--optimizer", "lamb"}), Catch::Contains("sgd, adam, rmsprop"));
  CHECK_THAT(errorOf({"--out", "d", "--model", "resnet19"}), Catch::Contains("resnet18"));
  CHECK_THAT(errorOf({}), Catch::Contains("--out"));
}
