#include <catch2/catch.hpp>

#include "common/usage_error.h"
#include "experiments/sweep/slurm_launcher.h"
#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_runner.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

// The sbatch command line of a point (sbatchSubmission), word for word: on one machine's worth of
// tasks (--ntasks), on GPUs, and placed on nodes (--nodes, --ntasks-per-node) through
// train_multinode.sbatch. Needs no Slurm: the scripts are empty files in a temporary slurm/ folder.

namespace fs = std::filesystem;
using dtbench::sweep::expandGrid;
using dtbench::sweep::Grid;
using dtbench::sweep::GridPoint;
using dtbench::sweep::parseGridAxis;
using dtbench::sweep::sbatchSubmission;
using dtbench::sweep::SweepSettings;

namespace {

// A slurm/ folder holding the default job scripts (empty files), removed at the end.
struct ScriptFolder {
  fs::path root;
  ScriptFolder() {
    char pattern[] = "/tmp/dtbench-sbatch-test.XXXXXX";
    root = mkdtemp(pattern);
    fs::create_directories(root / "slurm");
    for (const char* name : {"train_cpu.sbatch", "train_gpus.sbatch", "train_multinode.sbatch", "mine.sbatch"})
      std::ofstream(root / "slurm" / name) << "#!/bin/bash\n";
  }
  ~ScriptFolder() { fs::remove_all(root); }
  std::string script(const char* name) const { return (root / "slurm" / name).string(); }
};

SweepSettings settingsIn(const ScriptFolder& folder, std::vector<std::string> trainFlags) {
  SweepSettings settings;
  settings.outDir = (folder.root / "runs").string();
  settings.trainFlags = std::move(trainFlags);
  settings.executable = "/opt/dtbench";
  settings.slurm.scriptDirectory = (folder.root / "slurm").string();
  return settings;
}

GridPoint slurmPointOf(const std::vector<std::string>& axes, int ranksPerNode, size_t index) {
  Grid grid;
  for (const std::string& axis : axes) dtbench::sweep::addAxis(grid, parseGridAxis(axis));
  return expandGrid(grid, ranksPerNode).at(index);
}

using Words = std::vector<std::string>;

}  // namespace

TEST_CASE("a point of world N is sbatch --ntasks=N through train_cpu.sbatch", "[sweep][slurm]") {
  const ScriptFolder folder;
  const SweepSettings settings = settingsIn(folder, {"--model", "lenet"});
  const auto submission = sbatchSubmission(slurmPointOf({"world=1,2", "batch=8"}, 1, 1), settings);
  const std::string runs = (folder.root / "runs").string();
  CHECK(submission.command == Words{"sbatch", "--parsable", "--job-name=world2-batch8", "--ntasks=2",
                                    "--output=" + runs + "/world2-batch8.log", "--open-mode=append", "--export=ALL",
                                    folder.script("train_cpu.sbatch"), "--model", "lenet", "--batch-size", "8"});
  CHECK(submission.environment ==
        std::vector<std::pair<std::string, std::string>>{{"DTBENCH", "/opt/dtbench"}, {"RUNS", runs},
                                                         {"RUN_NAME", "world2-batch8"}});
}

TEST_CASE("on one machine's emulated cluster each point waits for the one before, unless --allow-overlap",
          "[sweep][slurm]") {
  const ScriptFolder folder;
  SweepSettings settings = settingsIn(folder, {"--model", "lenet"});
  const char* before = std::getenv("DTBENCH_CLUSTER");
  const std::string saved = before ? before : "";
  unsetenv("DTBENCH_CLUSTER");
  CHECK_FALSE(dtbench::sweep::pointsRunOneAtATime(settings.slurm));  // a real cluster: as Slurm places them
  setenv("DTBENCH_CLUSTER", "/tmp/cluster.json", 1);
  CHECK(dtbench::sweep::pointsRunOneAtATime(settings.slurm));
  settings.slurm.allowOverlap = true;
  CHECK_FALSE(dtbench::sweep::pointsRunOneAtATime(settings.slurm));
  if (before) setenv("DTBENCH_CLUSTER", saved.c_str(), 1); else unsetenv("DTBENCH_CLUSTER");

  const auto command = sbatchSubmission(slurmPointOf({"world=1,2"}, 1, 1), settings, "4711").command;
  const Words tail(command.begin() + 3, command.end());
  CHECK(tail == Words{"--ntasks=2", "--output=" + (folder.root / "runs" / "world2.log").string(), "--open-mode=append",
                      "--export=ALL", "--dependency=afterany:4711", folder.script("train_cpu.sbatch"), "--model",
                      "lenet"});
  // The first point, or one submitted when the job before has ended: no dependency.
  const auto first = sbatchSubmission(slurmPointOf({"world=1,2"}, 1, 0), settings).command;
  CHECK(std::none_of(first.begin(), first.end(), [](const std::string& w) { return w.rfind("--dependency", 0) == 0; }));
}

TEST_CASE("a GPU point of world N asks for one node with N GPUs through train_gpus.sbatch", "[sweep][slurm]") {
  const ScriptFolder folder;
  SweepSettings settings = settingsIn(folder, {"--device", "cuda"});
  settings.slurm.sbatchArgs = {"--time=10", "-p", "gpu"};
  const auto command = sbatchSubmission(slurmPointOf({"world=4"}, 1, 0), settings).command;
  CHECK(Words(command.begin() + 3, command.end()) ==
        Words{"--ntasks=4", "--output=" + (folder.root / "runs" / "world4.log").string(), "--open-mode=append",
              "--export=ALL", "--ntasks-per-node=4", "--gres=gpu:4", "--time=10", "-p", "gpu",
              folder.script("train_gpus.sbatch"), "--device", "cuda"});
}

TEST_CASE("a point on M nodes is sbatch --nodes=M --ntasks-per-node=K through train_multinode.sbatch",
          "[sweep][slurm][nodes]") {
  const ScriptFolder folder;
  const std::string log = "--output=" + (folder.root / "runs" / "nodes2-topology_ring.log").string();
  SECTION("CPU ranks (--device cpu) cancel the script's GPU request") {
    SweepSettings settings = settingsIn(folder, {"--device", "cpu"});
    settings.slurm.sbatchArgs = {"--cpus-per-task=2"};
    const auto point = slurmPointOf({"nodes=1,2", "topology=ring"}, 3, 1);
    REQUIRE(point.worldSize == 6);
    CHECK(sbatchSubmission(point, settings).command ==
          Words{"sbatch", "--parsable", "--job-name=nodes2-topology_ring", "--nodes=2", "--ntasks=6",
                "--ntasks-per-node=3", log, "--open-mode=append", "--export=ALL", "--gres=none",
                "--cpus-per-task=2", folder.script("train_multinode.sbatch"), "--device", "cpu", "--topology",
                "ring"});
  }
  SECTION("without --device train_multinode.sbatch runs --device cuda and gets one GPU per rank of a node") {
    const auto command = sbatchSubmission(slurmPointOf({"nodes=1,2", "topology=ring"}, 2, 1), settingsIn(folder, {}))
                             .command;
    CHECK(command == Words{"sbatch", "--parsable", "--job-name=nodes2-topology_ring", "--nodes=2", "--ntasks=4",
                           "--ntasks-per-node=2", log, "--open-mode=append", "--export=ALL", "--gres=gpu:2",
                           folder.script("train_multinode.sbatch"), "--topology", "ring"});
  }
  SECTION("--slurm-script is used as given and no --gres is added") {
    SweepSettings settings = settingsIn(folder, {"--device", "cuda:0"});
    settings.slurm.script = folder.script("mine.sbatch");
    const auto command = sbatchSubmission(slurmPointOf({"nodes=4"}, 1, 0), settings).command;
    CHECK(Words(command.begin() + 3, command.end()) ==
          Words{"--nodes=4", "--ntasks=4", "--ntasks-per-node=1",
                "--output=" + (folder.root / "runs" / "nodes4.log").string(), "--open-mode=append", "--export=ALL",
                folder.script("mine.sbatch"), "--device", "cuda:0"});
  }
}

TEST_CASE("with --min-nodes a point on M nodes asks for a node range and no task count, so that a requeued job runs "
          "on the nodes that are free", "[sweep][slurm][nodes]") {
  const ScriptFolder folder;
  using Environment = std::vector<std::pair<std::string, std::string>>;
  const std::string runs = (folder.root / "runs").string();
  SECTION("CPU ranks, one a node: --nodes=MIN-M and nothing else of tasks; the job script counts the nodes") {
    SweepSettings settings = settingsIn(folder, {"--device", "cpu"});
    settings.slurm.minNodes = 2;
    const auto range = sbatchSubmission(slurmPointOf({"nodes=1,2,3"}, 1, 2), settings);
    CHECK(range.command == Words{"sbatch", "--parsable", "--job-name=nodes3", "--nodes=2-3",
                                 "--output=" + runs + "/nodes3.log", "--open-mode=append", "--export=ALL",
                                 "--gres=none", folder.script("train_multinode.sbatch"), "--device", "cpu"});
    CHECK(range.environment == Environment{{"DTBENCH", "/opt/dtbench"}, {"RUNS", runs}, {"RUN_NAME", "nodes3"},
                                           {"DTBENCH_TASKS_PER_NODE", "1"}});
    // A point on MIN nodes or fewer has no range: its node count as without --min-nodes.
    for (size_t index : {0, 1}) {
      const auto fixed = sbatchSubmission(slurmPointOf({"nodes=1,2,3"}, 1, index), settings).command;
      const std::string nodes = std::to_string(index + 1);
      CHECK(Words(fixed.begin() + 3, fixed.begin() + 6) ==
            Words{"--nodes=" + nodes, "--ntasks=" + nodes, "--ntasks-per-node=1"});
    }
  }
  SECTION("K ranks a node: every node must hold K tasks' CPUs (--mincpus = K x --cpus-per-task)") {
    SweepSettings settings = settingsIn(folder, {});
    settings.slurm.minNodes = 1;
    for (const auto& [args, mincpus] : std::vector<std::pair<Words, std::string>>{
             {{"--time=10"}, "--mincpus=2"},
             {{"-c", "4", "--time=10"}, "--mincpus=8"},
             {{"--cpus-per-task=2", "-c3"}, "--mincpus=6"},
             {{"--cpus-per-task", "5"}, "--mincpus=10"}}) {
      settings.slurm.sbatchArgs = args;
      const auto submission = sbatchSubmission(slurmPointOf({"nodes=4"}, 2, 0), settings);
      Words want{"sbatch", "--parsable", "--job-name=nodes4", "--nodes=1-4", "--output=" + runs + "/nodes4.log",
                 "--open-mode=append", "--export=ALL", mincpus, "--gres=gpu:2"};
      want.insert(want.end(), args.begin(), args.end());
      want.push_back(folder.script("train_multinode.sbatch"));
      CHECK(submission.command == want);
      CHECK(submission.environment.back() == std::pair<std::string, std::string>{"DTBENCH_TASKS_PER_NODE", "2"});
    }
  }
  SECTION("a point on fixed nodes also tells the job script its ranks a node") {
    const auto fixed = sbatchSubmission(slurmPointOf({"nodes=2"}, 3, 0), settingsIn(folder, {"--device", "cpu"}));
    CHECK(fixed.environment.back() == std::pair<std::string, std::string>{"DTBENCH_TASKS_PER_NODE", "3"});
    const auto world = sbatchSubmission(slurmPointOf({"world=2"}, 1, 0), settingsIn(folder, {"--device", "cpu"}));
    CHECK(world.environment.size() == 3);  // one machine's tasks: no nodes to count
  }
  SECTION("--min-nodes below 1, or without a nodes axis, is refused naming what to change") {
    Grid nodes, world;
    dtbench::sweep::addAxis(nodes, parseGridAxis("nodes=2,4"));
    dtbench::sweep::addAxis(world, parseGridAxis("world=2,4"));
    CHECK_NOTHROW(dtbench::sweep::checkMinNodes(1, nodes));
    CHECK_THROWS_WITH(dtbench::sweep::checkMinNodes(0, nodes),
                      Catch::Contains("--min-nodes must be at least 1") && Catch::Contains("got 0"));
    CHECK_THROWS_WITH(dtbench::sweep::checkMinNodes(2, world),
                      Catch::Contains("add --grid nodes=M1,M2") && Catch::Contains("or drop --min-nodes"));
  }
}

TEST_CASE("a point on nodes without train_multinode.sbatch is refused before anything is submitted",
          "[sweep][slurm][nodes]") {
  const ScriptFolder folder;
  fs::remove(folder.root / "slurm" / "train_multinode.sbatch");
  CHECK_THROWS_WITH(sbatchSubmission(slurmPointOf({"nodes=2"}, 1, 0), settingsIn(folder, {"--device", "cpu"})),
                    Catch::Contains("train_multinode.sbatch does not exist; set DTBENCH_SLURM_DIR"));
  // A point of a plain world is not affected.
  CHECK_NOTHROW(sbatchSubmission(slurmPointOf({"world=2"}, 1, 0), settingsIn(folder, {"--device", "cpu"})));
}

TEST_CASE("a typed GPU (--gpu-type) for every GPU point, and node features (--constraint)",
          "[sweep][slurm][gpu-type]") {
  const ScriptFolder folder;
  SweepSettings settings = settingsIn(folder, {"--device", "cuda"});
  settings.slurm.gpuType = "a100";
  settings.slurm.constraint = "ib";
  const auto one = sbatchSubmission(slurmPointOf({"world=1,4"}, 1, 0), settings).command;
  const auto four = sbatchSubmission(slurmPointOf({"world=1,4"}, 1, 1), settings).command;
  // The baseline and the 4-GPU point on the same model: the report never compares two models.
  CHECK(std::find(one.begin(), one.end(), "--gres=gpu:a100:1") != one.end());
  CHECK(std::find(four.begin(), four.end(), "--gres=gpu:a100:4") != four.end());
  CHECK(std::find(four.begin(), four.end(), "--constraint=ib") != four.end());
  const auto nodes = sbatchSubmission(slurmPointOf({"nodes=2"}, 2, 0), settingsIn(folder, {})).command;
  CHECK(std::find(nodes.begin(), nodes.end(), "--gres=gpu:2") != nodes.end());  // no type: any GPU
  SweepSettings typedNodes = settingsIn(folder, {});
  typedNodes.slurm.gpuType = "h100";
  const auto typed = sbatchSubmission(slurmPointOf({"nodes=2"}, 2, 0), typedNodes).command;
  CHECK(std::find(typed.begin(), typed.end(), "--gres=gpu:h100:2") != typed.end());

  // A point the type cannot apply to is refused, saying what to do.
  SweepSettings cpu = settingsIn(folder, {"--device", "cpu"});
  cpu.slurm.gpuType = "a100";
  CHECK_THROWS_WITH(dtbench::sweep::slurmScript(slurmPointOf({"world=2"}, 1, 0), cpu),
                    Catch::Contains("runs on the CPU") && Catch::Contains("--device cuda"));
  SweepSettings own = settingsIn(folder, {"--device", "cuda"});
  own.slurm.gpuType = "a100";
  own.slurm.script = folder.script("mine.sbatch");
  CHECK_THROWS_WITH(dtbench::sweep::slurmScript(slurmPointOf({"world=2"}, 1, 0), own),
                    Catch::Contains("--slurm-script") && Catch::Contains("#SBATCH --gres"));
}

TEST_CASE("a --mode dp point is one task that asks for the GPUs of its world", "[sweep][slurm][mode]") {
  const ScriptFolder folder;
  SweepSettings settings = settingsIn(folder, {"--device", "cuda"});
  settings.slurm.gpuType = "a100";
  const auto command = sbatchSubmission(slurmPointOf({"mode=ddp,dp", "world=4"}, 1, 1), settings).command;
  CHECK(Words(command.begin() + 2, command.end()) ==
        Words{"--job-name=mode_dp-world4", "--ntasks=1",
              "--output=" + (folder.root / "runs" / "mode_dp-world4.log").string(), "--open-mode=append",
              "--export=ALL", "--ntasks-per-node=1", "--gres=gpu:a100:4", folder.script("train_gpus.sbatch"),
              "--device", "cuda", "--mode", "dp"});
  // Its ddp sibling: four tasks, one GPU each.
  const auto ddp = sbatchSubmission(slurmPointOf({"mode=ddp,dp", "world=4"}, 1, 0), settings).command;
  CHECK(std::find(ddp.begin(), ddp.end(), "--ntasks=4") != ddp.end());
  CHECK(std::find(ddp.begin(), ddp.end(), "--gres=gpu:a100:4") != ddp.end());
}

TEST_CASE("what the Slurm launcher refuses is refused before the sweep takes its directory, writing nothing",
          "[sweep][slurm]") {
  const ScriptFolder folder;
  SweepSettings cpu = settingsIn(folder, {"--device", "cpu"});
  cpu.slurm.gpuType = "a100";
  const std::vector<GridPoint> points = {slurmPointOf({"world=1,2"}, 1, 0), slurmPointOf({"world=1,2"}, 1, 1)};
  CHECK_THROWS_WITH(dtbench::sweep::checkSubmissions(points, cpu), Catch::Contains("runs on the CPU"));
  SweepSettings missing = settingsIn(folder, {"--device", "cpu"});
  missing.slurm.script = (folder.root / "none.sbatch").string();
  CHECK_THROWS_WITH(dtbench::sweep::checkSubmissions(points, missing), Catch::Contains("is not a file"));
  SweepSettings noSbatch = settingsIn(folder, {"--device", "cpu"});
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", (folder.root / "empty").string().c_str(), 1);
  CHECK_THROWS_WITH(dtbench::sweep::checkSubmissions(points, noSbatch), Catch::Contains("sbatch is not in PATH"));
  setenv("PATH", saved.c_str(), 1);
  CHECK_FALSE(fs::exists(folder.root / "runs"));
}
