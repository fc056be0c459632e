#include "catch_torch.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/sweep_options.h"
#include "experiments/cli/train_options.h"

#include <string>
#include <vector>

using dtbench::common::UsageError;
using dtbench::experiments::parseSweepOptions;
using dtbench::experiments::trainFlagKind;
using dtbench::experiments::ValueKind;

namespace {

std::string sweepErrorOf(const std::vector<std::string>& grid) {
  std::vector<std::string> args{"--out", "d"};
  for (const std::string& axis : grid) args.insert(args.end(), {"--grid", axis});
  try {
    parseSweepOptions(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the sweep knows which train flags take numbers", "[cli][sweep]") {
  CHECK(trainFlagKind("lr") == ValueKind::kNumber);
  CHECK(trainFlagKind("bucket-mb") == ValueKind::kNumber);
  CHECK(trainFlagKind("epochs") == ValueKind::kInteger);
  CHECK(trainFlagKind("seed") == ValueKind::kCount);
  CHECK(trainFlagKind("model") == ValueKind::kText);
  CHECK(trainFlagKind("drop-last") == ValueKind::kSwitch);
  CHECK(trainFlagKind("no-such-flag") == ValueKind::kUnknown);
}

TEST_CASE("grid values that are the same number are refused, naming the key and both values", "[cli][sweep]") {
  CHECK_THAT(sweepErrorOf({"lr=0.1,0.10"}), Catch::Contains("lr lists 0.1 and 0.10, the same number"));
  CHECK_THAT(sweepErrorOf({"lr=0.001,1e-3"}), Catch::Contains("lr lists 0.001 and 1e-3"));
  CHECK_THAT(sweepErrorOf({"epochs=2,02"}), Catch::Contains("epochs lists 2 and 02"));
  CHECK_THAT(sweepErrorOf({"seed=16,0x10"}), Catch::Contains("seed lists 16 and 0x10"));
  CHECK_THAT(sweepErrorOf({"batch=32,032"}), Catch::Contains("batch lists 32 and 032"));
  // Text flags compare as text: two spellings are two values.
  CHECK(sweepErrorOf({"model=lenet,LeNet"}).empty());
  CHECK(sweepErrorOf({"lr=0.1,0.2", "seed=1,2"}).empty());
}

TEST_CASE("grid keys must be train flags that take a value of their type", "[cli][sweep]") {
  CHECK_THAT(sweepErrorOf({"lr=0.1,fast"}), Catch::Contains("lr takes finite numbers, got 'fast'"));
  CHECK_THAT(sweepErrorOf({"lr=0.1,nan"}), Catch::Contains("'nan'"));
  CHECK_THAT(sweepErrorOf({"epochs=1.5"}), Catch::Contains("epochs takes whole numbers, got '1.5'"));
  CHECK_THAT(sweepErrorOf({"lrr=0.1"}), Catch::Contains("'lrr' is not a dtbench train flag"));
  CHECK_THAT(sweepErrorOf({"drop-last=1"}), Catch::Contains("--drop-last takes no value"));
}

TEST_CASE("the sweep's own numbers name their flag", "[cli][sweep]") {
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d", "--grid", "batch=8", "--retries", "1.5"}),
                    Catch::Contains("--retries takes a whole number, got '1.5'"));
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d", "--grid", "batch=8", "--retries", "11"}),
                    Catch::Contains("--retries is from 0 to 10, got 11"));
  CHECK(parseSweepOptions({"--out", "d", "--grid", "batch=8", "--retries", "10"}).retries == 10);
  CHECK_THROWS_WITH(parseSweepOptions(
                        {"--launcher", "slurm", "--slurm-timeout", "nan", "--out", "d", "--grid", "batch=8"}),
                    Catch::Contains("--slurm-timeout") && Catch::Contains("'nan'"));
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "", "--grid", "batch=8"}), Catch::Contains("--out needs a value"));
}

TEST_CASE("the typed GPU and node features (--gpu-type, --constraint) are Slurm's, one GPU model", "[cli][sweep]") {
  const std::vector<std::string> grid{"--out", "d", "--grid", "world=1,2"};
  auto with = [&grid](std::vector<std::string> flags) {
    flags.insert(flags.end(), grid.begin(), grid.end());
    return flags;
  };
  const auto typed = parseSweepOptions(with({"--launcher", "slurm", "--gpu-type", "a100", "--constraint", "ib"}));
  CHECK(typed.gpuType == "a100");
  CHECK(typed.constraint == "ib");
  CHECK_THROWS_WITH(parseSweepOptions(with({"--gpu-type", "a100"})),
                    Catch::Contains("--gpu-type is for --launcher slurm"));
  CHECK_THROWS_WITH(parseSweepOptions(with({"--constraint", "ib"})),
                    Catch::Contains("--constraint is for --launcher slurm"));
  CHECK_THROWS_WITH(parseSweepOptions(with({"--launcher", "slurm", "--gpu-type", "a100:2"})),
                    Catch::Contains("--gpu-type must be one gres type name") && Catch::Contains("'a100:2'"));
}

TEST_CASE("a flag's value may start with -- unless it is a bare flag of the command", "[cli][sweep]") {
  // sbatch's own words pass on, even one named like a sweep flag when it carries its value.
  const auto passed = parseSweepOptions({"--out", "d", "--grid", "world=1,2", "--launcher", "slurm", "--sbatch-args",
                                         "--constraint=a100"});
  REQUIRE(passed.sbatchArgs.size() == 1);
  CHECK(passed.sbatchArgs.front() == "--constraint=a100");
  CHECK(parseSweepOptions({"--out", "d", "--grid", "world=1,2", "--launcher", "slurm", "--sbatch-args",
                           "--time=30 -p cpu"})
            .sbatchArgs.size() == 3);
  // A flag left without its value, the next flag taken as it: named.
  CHECK_THROWS_WITH(parseSweepOptions({"--grid", "world=1,2", "--out", "--launcher", "slurm"}),
                    Catch::Contains("--out needs a value before --launcher"));
}

TEST_CASE("a second '--' is refused as one too many", "[cli][sweep]") {
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d", "--grid", "world=1,2", "--", "--", "--model", "lenet"}),
                    Catch::Contains("one '--' too many") && Catch::Contains("give a single '--'"));
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d", "--grid", "world=1,2", "--", "--model", "lenet", "--", "--epochs",
                                       "1"}),
                    Catch::Contains("one '--' too many"));
  CHECK(parseSweepOptions({"--out", "d", "--grid", "world=1,2", "--", "--model", "lenet"}).trainFlags ==
        std::vector<std::string>{"--model", "lenet"});
}

TEST_CASE("a sweep's --min-nodes makes each nodes point a node range on Slurm, and nothing else", "[cli][sweep]") {
  const std::vector<std::string> nodes{"--out", "d", "--grid", "nodes=2,3"};
  auto with = [](std::vector<std::string> grid, std::vector<std::string> flags) {
    grid.insert(grid.end(), flags.begin(), flags.end());
    return grid;
  };
  CHECK(parseSweepOptions(with(nodes, {"--launcher", "slurm", "--min-nodes", "2"})).minNodes == 2);
  CHECK(parseSweepOptions(with(nodes, {"--launcher", "slurm"})).minNodes == 0);
  CHECK_THROWS_WITH(parseSweepOptions(with(nodes, {"--min-nodes", "2"})),
                    Catch::Contains("--min-nodes is for --launcher slurm"));
  CHECK_THROWS_WITH(parseSweepOptions(with(nodes, {"--launcher", "slurm", "--min-nodes", "0"})),
                    Catch::Contains("--min-nodes must be at least 1"));
  CHECK_THROWS_WITH(
      parseSweepOptions(with({"--out", "d", "--grid", "world=1,2"}, {"--launcher", "slurm", "--min-nodes", "2"})),
      Catch::Contains("add --grid nodes="));
}

TEST_CASE("sweep's defaults are SweepOptions' own, and --help shows them", "[cli][sweep]") {
  const dtbench::experiments::SweepOptions defaults;
  const auto o = parseSweepOptions({"--out", "d", "--grid", "batch=8,16", "--grid", "world=1,2"});
  CHECK(o.outDir == "d");
  CHECK(o.retries == defaults.retries);
  CHECK(o.ranksPerNode == defaults.ranksPerNode);
  CHECK(o.launcher == defaults.launcher);
  CHECK(o.slurmTimeout == defaults.slurmTimeout);
  CHECK(o.minNodes == defaults.minNodes);
  CHECK(o.allowOverlap == defaults.allowOverlap);
  CHECK(o.dryRun == defaults.dryRun);
  // Every --grid, in the order given.
  REQUIRE(o.grid.axes.size() == 2);
  CHECK(o.grid.axes[0].key == "batch");
  CHECK(o.grid.axes[1].key == "world");
  const std::string help = parseSweepOptions({"--help"}).helpText;
  for (const char* shown : {"--retries arg", "(default: 1)", "(default: local)", "(default: 0)", "--out DIR"})
    CHECK_THAT(help, Catch::Contains(shown));
  CHECK_THROWS_WITH(parseSweepOptions({"--grid", "batch=8"}), Catch::Contains("--out DIR is required"));
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d"}), Catch::Contains("give the grid"));
  CHECK_THROWS_WITH(parseSweepOptions({"--out", "d", "--grid", "batch=8", "--allow-overlap"}),
                    Catch::Contains("--allow-overlap is for --launcher slurm"));
}
