#include "catch_torch.h"
#include "common/usage_error.h"
#include "option_test_helpers.h"
#include "experiments/cli/predict_options.h"
#include "experiments/predict/prediction_table_names.h"
#include "experiments/predict/zoo_step.h"
#include "run/settings.h"

#include <cctype>
#include <string>
#include <vector>

using dtbench::common::UsageError;
using dtbench::experiments::parsePredictOptions;
using dtbench::experiments::PredictOptions;

namespace {

std::string predictErrorOf(const std::vector<std::string>& args) {
  return dtbench::test::usageErrorOf([](const auto& a) { return parsePredictOptions(a); }, args);
}


const std::vector<std::string> kPrediction{"run", "--hardware", "hw.json", "--world", "2,4"};

std::vector<std::string> with(std::vector<std::string> flags) {
  flags.insert(flags.begin(), kPrediction.begin(), kPrediction.end());
  return flags;
}

}  // namespace

TEST_CASE("predict's defaults are the settings' own, and --help shows them", "[cli][predict]") {
  const dtbench::predict::ZooStepRequest zoo;
  const PredictOptions o = parsePredictOptions({"--describe-model", "resnet18", "--batch-size", "8"});
  REQUIRE(o.describeModel.has_value());
  CHECK(o.describeModel->model == "resnet18");
  CHECK(o.describeModel->batchSize == 8);
  CHECK(o.describeModel->imageSize == zoo.imageSize);
  CHECK(o.describeModel->classes == zoo.classes);
  CHECK(o.describeModel->trainSamples == zoo.trainSamples);
  CHECK(o.describeModel->forwardS == zoo.forwardS);
  CHECK(o.describeModel->optimizerS == zoo.optimizerS);
  CHECK(o.format == PredictOptions{}.format);
  const std::string help = dtbench::test::asWords(parsePredictOptions({"--help"}).helpText);
  for (const std::string& shown : {"square images of this many pixels (a ResNet at 64 or more takes its ImageNet "
                                  "layout) (default: " + std::to_string(zoo.imageSize) + ")",
                                  "classes of the classifier (default: " + std::to_string(zoo.classes) + ")",
                                  "images per epoch (default: " + std::to_string(zoo.trainSamples) + ")",
                                  std::string("or json (default: md)")})
    CHECK_THAT(help, Catch::Contains(shown));
  CHECK(parsePredictOptions({"--describe-model", "lenet", "--batch-size", "8", "--forward-ms", "2.5"})
            .describeModel->forwardS == 0.0025);
}

TEST_CASE("predict's what-ifs go through dtbench train's rows of the same flags", "[cli][predict]") {
  const PredictOptions o = parsePredictOptions(with({"--topology", "ring", "--backend", "gloo", "--sync", "pairavg",
                                                     "--bucket-mb", "4", "--no-overlap", "--compress", "powersgd",
                                                     "--compress-rank", "2", "--bucket-layout", "fusion",
                                                     "--element-bytes", "2", "--segment-bytes", "0"}));
  CHECK(o.worlds == std::vector<int>{2, 4});
  REQUIRE(o.whatIf.topology.has_value());
  CHECK(o.whatIf.topology->name() == "ring");
  CHECK(o.whatIf.sync == dtbench::run::Sync::kPairavg);
  CHECK(o.whatIf.bucketMb == 4.0);
  CHECK(o.whatIf.overlap == false);
  CHECK(o.whatIf.compress == dtbench::run::Compression::kPowerSgd);
  CHECK(o.whatIf.compressRank == 2);
  CHECK(o.whatIf.elementBytes == 2);
  CHECK(o.whatIf.segmentBytes == 0);
  const PredictOptions none = parsePredictOptions(kPrediction);
  CHECK_FALSE(none.whatIf.topology.has_value());
  CHECK_FALSE(none.whatIf.compress.has_value());
  CHECK_FALSE(none.whatIf.overlap.has_value());
  // train's rules and names, each error naming the flag.
  CHECK_THAT(predictErrorOf(with({"--compress-rank", "0"})), Catch::Contains("--compress-rank must be in [1, 1024]"));
  CHECK_THAT(predictErrorOf(with({"--bucket-mb", "0"})), Catch::Contains("--bucket-mb must be a finite number > 0"));
  CHECK_THAT(predictErrorOf(with({"--compress", "zstd"})), Catch::Contains("unknown gradient compression 'zstd'"));
  CHECK_THAT(predictErrorOf(with({"--backend", "bogus"})), Catch::Contains("unknown backend 'bogus'"));
  CHECK_THAT(predictErrorOf(with({"--topology", "ringg"})), Catch::Contains("unknown topology"));
  CHECK_THAT(predictErrorOf(with({"--element-bytes", "3"})), Catch::Contains("--element-bytes is 2"));
  // Lists are --vary's.
  CHECK_THAT(predictErrorOf(with({"--compress", "none,fp16"})), Catch::Contains("--compress 'none,fp16' names several"));
  const PredictOptions varied =
      parsePredictOptions(with({"--compress", "none,fp16", "--vary", "inter_node.bandwidth_gbit_s=1,10"}));
  CHECK(varied.compressions.size() == 2);
  CHECK_FALSE(varied.whatIf.compress.has_value());
  CHECK_THAT(predictErrorOf(with({"--compress", "fp16,fp16", "--vary", "inter_node.bandwidth_gbit_s=1,10"})),
             Catch::Contains("names fp16 twice"));
  // The modes' flags.
  CHECK_THAT(predictErrorOf(with({"--batch-size", "4"})), Catch::Contains("--batch-size belongs to --describe-model"));
  CHECK_THAT(predictErrorOf({"run", "--world", "2"}), Catch::Contains("--hardware FILE is required"));
  CHECK_THAT(predictErrorOf({"--describe", "run", "--hardware", "hw.json"}),
             Catch::Contains("--describe and --describe-model write a step description"));
  CHECK_THAT(predictErrorOf(with({"--measured", "a"})), Catch::Contains("give --plots DIR too"));
}

TEST_CASE("predict's --table takes its list of tables: the help names each, an unknown name is refused",
          "[cli][predict]") {
  using dtbench::predict::PredictMode;
  using dtbench::predict::predictTableNames;
  const std::string help = dtbench::test::asWords(parsePredictOptions({"--help"}).helpText);
  REQUIRE_FALSE(predictTableNames().empty());
  for (const dtbench::predict::PredictTableName& table : predictTableNames())
    CHECK_THAT(help, Catch::Contains(table.name));
  CHECK_THAT(help, Catch::Contains("with --vary rate_axis, crossings"));
  // Each mode takes its own tables.
  CHECK(parsePredictOptions(with({"--table", "limits,time_speedup"})).tables ==
        std::vector<std::string>{"limits", "time_speedup"});
  CHECK(parsePredictOptions(with({"--table", "crossings", "--vary", "compute_scale=1,2"})).tables ==
        std::vector<std::string>{"crossings"});
  CHECK(parsePredictOptions({"--allreduce", "a.csv", "--hardware", "hw.json", "--table", "allreduce_model"}).tables ==
        std::vector<std::string>{"allreduce_model"});
  CHECK(parsePredictOptions({"--calibrate", "a.csv", "--table", "calibration"}).tables ==
        std::vector<std::string>{"calibration"});
  // An unknown name, at parse time, naming every table.
  const std::string unknown = predictErrorOf(with({"--table", "time_speedup,rate-axis"}));
  CHECK_THAT(unknown, Catch::Contains("--table: no table 'rate-axis'"));
  for (const dtbench::predict::PredictTableName& table : predictTableNames())
    CHECK_THAT(unknown, Catch::Contains(table.name));
  CHECK_THAT(predictErrorOf(with({"--table", ""})), Catch::Contains("--table"));
  // A table of another mode, naming the mode's own.
  const std::string vary = predictErrorOf(with({"--table", "rate_axis"}));
  CHECK_THAT(vary, Catch::Contains("--table rate_axis is a table of --vary"));
  for (const std::string& name : predictTableNames(PredictMode::kPrediction)) CHECK_THAT(vary, Catch::Contains(name));
  CHECK_THAT(predictErrorOf(with({"--table", "limits", "--vary", "compute_scale=1,2"})),
             Catch::Contains("--table limits is a table of a prediction without --vary; this command's tables are "
                             "rate_axis, crossings"));
  CHECK_THAT(predictErrorOf({"--calibrate", "a.csv", "--table", "time_speedup"}),
             Catch::Contains("this command's tables are calibration"));
  CHECK_THAT(predictErrorOf({"--describe", "run", "--table", "time_speedup"}),
             Catch::Contains("--table picks tables of a prediction"));
}
