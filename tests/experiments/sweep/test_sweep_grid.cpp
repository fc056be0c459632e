#include <catch2/catch.hpp>

#include "experiments/sweep/sweep_grid.h"
#include "common/usage_error.h"
#include "temp_dir.h"

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using dtbench::sweep::addAxis;
using dtbench::sweep::checkTrainFlags;
using dtbench::sweep::expandGrid;
using dtbench::sweep::Grid;
using dtbench::sweep::GridAxis;
using dtbench::sweep::parseGridAxis;
using dtbench::sweep::parseGridText;
using dtbench::sweep::pointName;
using dtbench::common::UsageError;

namespace {

Grid gridOf(const std::vector<std::string>& axes) {
  Grid grid;
  for (const std::string& axis : axes) addAxis(grid, parseGridAxis(axis));
  return grid;
}

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the grid expands as the cartesian product with the last key fastest", "[sweep]") {
  const auto points = expandGrid(gridOf({"batch=32,64", "world=1,2,4", "topology=ring"}));
  REQUIRE(points.size() == 6);
  std::vector<std::string> names;
  for (const auto& point : points) names.push_back(point.name);
  CHECK(names == std::vector<std::string>{"batch32-world1-topology_ring", "batch32-world2-topology_ring",
                                          "batch32-world4-topology_ring", "batch64-world1-topology_ring",
                                          "batch64-world2-topology_ring", "batch64-world4-topology_ring"});
  CHECK(points[4].worldSize == 2);
  CHECK(points[4].trainFlags == std::vector<std::string>{"--batch-size", "64", "--topology", "ring"});
  CHECK(points[4].settings.size() == 3);
}

TEST_CASE("the order of the keys as given decides the order of the points", "[sweep]") {
  const auto points = expandGrid(gridOf({"model=lenet,resnet18", "batch=8"}));
  REQUIRE(points.size() == 2);
  CHECK(points[0].name == "model_lenet-batch8");
  CHECK(points[1].name == "model_resnet18-batch8");
  CHECK(points[1].trainFlags == std::vector<std::string>{"--model", "resnet18", "--batch-size", "8"});
  CHECK(points[1].worldSize == 1);
}

TEST_CASE("aliases gpus and batch-size name their canonical keys", "[sweep]") {
  const auto points = expandGrid(gridOf({"gpus=2", "batch-size=16"}));
  REQUIRE(points.size() == 1);
  CHECK(points[0].name == "world2-batch16");
  CHECK(points[0].worldSize == 2);
  CHECK(points[0].trainFlags == std::vector<std::string>{"--batch-size", "16"});
}

TEST_CASE("names keep only filesystem-safe characters", "[sweep]") {
  CHECK(pointName({{"topology", "binary-tree-star"}, {"lr", "0.05"}}) == "topology_binary_tree_star-lr0.05");
  CHECK(pointName({{"bucket-mb", "25"}}) == "bucket_mb25");
  CHECK(pointName({{"model", "a/b c"}}) == "model_a_b_c");
  CHECK(pointName({{"lr", "1e-3"}}) == "lr1e_3");
}

TEST_CASE("two values that name the same directory are refused", "[sweep]") {
  CHECK_THAT(errorOf([] { expandGrid(gridOf({"model=a/b,a_b"})); }),
             Catch::Matches(".*two points would share the run directory 'model_a_b'.*"));
}

TEST_CASE("values and keys are trimmed", "[sweep]") {
  const GridAxis axis = parseGridAxis(" batch = 8 , 16 ");
  CHECK(axis.key == "batch");
  CHECK(axis.values == std::vector<std::string>{"8", "16"});
}

TEST_CASE("the grid file has one axis per line and hash comments", "[sweep]") {
  const auto axes = parseGridText("# the scaling study\nbatch=32,64   # per rank\n\n  world=1,2\n", "g.txt");
  REQUIRE(axes.size() == 2);
  CHECK(axes[0].key == "batch");
  CHECK(axes[0].values == std::vector<std::string>{"32", "64"});
  CHECK(axes[1].key == "world");
  CHECK(axes[1].values == std::vector<std::string>{"1", "2"});
  CHECK(parseGridText("# nothing\n\n", "g.txt").empty());
  CHECK_THAT(errorOf([] { parseGridText("batch=8\nmodel\n", "g.txt"); }),
             Catch::Matches("g.txt:2: 'model' is not KEY=V1,V2.*"));
}

TEST_CASE("a grid file may start with a byte order mark and a directory is no grid file", "[sweep]") {
  dtbench::testing::TempDir dir;
  const std::string path = (dir.path() / "grid.txt").string();
  std::ofstream(path) << "\xEF\xBB\xBF" << "batch=8,16\n";
  const auto axes = dtbench::sweep::readGridFile(path);
  REQUIRE(axes.size() == 1);
  CHECK(axes[0].key == "batch");
  CHECK_THAT(errorOf([&] { dtbench::sweep::readGridFile(dir.path().string()); }),
             Catch::Contains("is a directory; give a file with one KEY=V1,V2 per line"));
}

TEST_CASE("a key given twice is refused also through its alias", "[sweep]") {
  CHECK_THAT(errorOf([] { gridOf({"batch=8", "batch=16"}); }), Catch::Matches("grid key 'batch' is given twice.*"));
  CHECK_THAT(errorOf([] { gridOf({"world=1", "gpus=2"}); }),
             Catch::Matches("grid key 'world' is given twice \\(gpus is another name for world\\).*"));
}

TEST_CASE("empty value lists and empty values are refused", "[sweep]") {
  CHECK_THAT(errorOf([] { parseGridAxis("batch="); }), Catch::Matches("--grid: batch has no values.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("batch=8,,16"); }), Catch::Matches("--grid: batch has an empty value.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("batch=8,"); }), Catch::Matches("--grid: batch has an empty value.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("model=lenet,lenet"); }), Catch::Matches(".*lists 'lenet' twice.*"));
}

TEST_CASE("world and batch must be positive integers", "[sweep]") {
  CHECK_THAT(errorOf([] { parseGridAxis("world=0"); }),
             Catch::Matches("--grid: world needs positive integers, got '0' \\(world is the number of ranks.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("gpus=-1"); }), Catch::Matches(".*world needs positive integers, got '-1'.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("world=two"); }), Catch::Matches(".*got 'two'.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("batch=32x"); }), Catch::Matches(".*batch needs positive integers.*"));
}

TEST_CASE("malformed axes and keys the sweep owns are refused", "[sweep]") {
  CHECK_THAT(errorOf([] { parseGridAxis("batch"); }), Catch::Matches("--grid: 'batch' is not KEY=V1,V2.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("=1,2"); }), Catch::Matches("--grid: '' is not a key.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("--model=lenet"); }), Catch::Matches("--grid: '--model' is not a key.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("out=a,b"); }), Catch::Matches(".*the sweep sets --out itself.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("world-size=2"); }), Catch::Matches(".*use world=N1,N2.*"));
  CHECK_THAT(errorOf([] { parseGridAxis("resume=1"); }), Catch::Matches(".*sets --resume itself.*"));
}

TEST_CASE("an empty grid is refused", "[sweep]") {
  CHECK_THAT(errorOf([] { expandGrid(Grid{}); }), Catch::Matches("the grid is empty.*"));
}

TEST_CASE("train flags the sweep controls are refused", "[sweep]") {
  const Grid grid = gridOf({"batch=8,16", "world=1,2", "model=lenet"});
  CHECK(errorOf([&] { checkTrainFlags(grid, {"--dataset", "synthetic", "--epochs", "2"}); }).empty());
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--out", "x"}); }),
             Catch::Matches("train flag --out after -- is set by the sweep.*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--out=x"}); }), Catch::Matches("train flag --out .*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--rank", "0"}); }), Catch::Matches("train flag --rank .*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--world-size", "2"}); }),
             Catch::Matches("train flag --world-size .*grid key world.*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--resume"}); }), Catch::Matches("train flag --resume .*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--batch-size", "4"}); }),
             Catch::Matches("train flag --batch-size after -- is also the grid key 'batch'.*"));
  CHECK_THAT(errorOf([&] { checkTrainFlags(grid, {"--model", "vgg11"}); }),
             Catch::Matches("train flag --model after -- is also the grid key 'model'.*"));
  CHECK(errorOf([&] { checkTrainFlags(gridOf({"world=1,2"}), {"--batch-size", "4"}); }).empty());
}

TEST_CASE("values of a numeric key that are the same number are refused", "[sweep]") {
  using dtbench::sweep::checkNumericAxis;
  CHECK_THAT(errorOf([] { parseGridAxis("batch=32,032"); }),
             Catch::Contains("--grid: batch lists 32 and 032, the same number"));
  CHECK_THAT(errorOf([] { parseGridAxis("world=1,2,01"); }), Catch::Contains("world lists 1 and 01"));
  CHECK_THAT(errorOf([] { checkNumericAxis(parseGridAxis("lr=0.1,0.10"), false); }),
             Catch::Contains("--grid: lr lists 0.1 and 0.10, the same number; give each value once"));
  CHECK_THAT(errorOf([] { checkNumericAxis(parseGridAxis("lr=0.05,5e-2", "grid.txt:3"), false); }),
             Catch::Contains("grid.txt:3: lr lists 0.05 and 5e-2"));
  CHECK_THAT(errorOf([] { checkNumericAxis(parseGridAxis("lr=0.1,inf"), false); }),
             Catch::Contains("lr takes finite numbers, got 'inf'"));
  CHECK_THAT(errorOf([] { checkNumericAxis(parseGridAxis("epochs=1,2.5"), true); }),
             Catch::Contains("epochs takes whole numbers, got '2.5'"));
  // 2^64 - 1 and 2^64 - 2 differ although a double cannot tell them apart.
  CHECK_NOTHROW(checkNumericAxis(parseGridAxis("seed=18446744073709551615,18446744073709551614"), true));
  CHECK_NOTHROW(checkNumericAxis(parseGridAxis("lr=0.1,0.01,1e-3"), false));
}

TEST_CASE("a nodes axis places nodes times ranks-per-node ranks and names the point nodesM", "[sweep][nodes]") {
  const auto points = expandGrid(gridOf({"nodes=1,2,4", "topology=ring,star"}), 2);
  REQUIRE(points.size() == 6);
  CHECK(points[0].name == "nodes1-topology_ring");
  CHECK(points[3].name == "nodes2-topology_star");
  CHECK(points[5].name == "nodes4-topology_star");
  CHECK(points[0].nodes == 1);
  CHECK(points[0].worldSize == 2);
  CHECK(points[3].nodes == 2);
  CHECK(points[3].worldSize == 4);
  CHECK(points[5].nodes == 4);
  CHECK(points[5].worldSize == 8);
  // nodes sets no train flag: the launcher places the ranks.
  CHECK(points[3].trainFlags == std::vector<std::string>{"--topology", "star"});
  // One rank per node by default; without a nodes axis a point has no placement.
  const auto single = expandGrid(gridOf({"nodes=3"}));
  REQUIRE(single.size() == 1);
  CHECK(single[0].worldSize == 3);
  CHECK(single[0].nodes == 3);
  CHECK(expandGrid(gridOf({"world=3"}), 2)[0].nodes == 0);
  CHECK(expandGrid(gridOf({"world=3"}), 2)[0].worldSize == 3);
}

TEST_CASE("world and nodes together are refused in either order", "[sweep][nodes]") {
  CHECK_THAT(errorOf([] { gridOf({"world=2", "nodes=1,2"}); }),
             Catch::Contains("--grid: grid keys world and nodes cannot both be given: with nodes a point's world is "
                             "nodes × --ranks-per-node"));
  CHECK_THAT(errorOf([] { gridOf({"nodes=1,2", "gpus=4"}); }), Catch::Contains("world and nodes cannot both be given"));
  CHECK_THAT(errorOf([] {
               Grid grid;
               for (GridAxis& axis : parseGridText("nodes=2\nworld=4\n", "g.txt")) addAxis(grid, std::move(axis));
             }),
             Catch::StartsWith("g.txt:2: grid keys world and nodes cannot both be given"));
  Grid both;
  both.axes = {parseGridAxis("nodes=2"), parseGridAxis("world=4")};
  CHECK_THAT(errorOf([&] { expandGrid(both); }), Catch::Contains("world and nodes cannot both be given"));
}

TEST_CASE("nodes must be positive integers and ranks per node at least 1", "[sweep][nodes]") {
  CHECK_THAT(errorOf([] { parseGridAxis("nodes=0"); }),
             Catch::Contains("--grid: nodes needs positive integers, got '0' (nodes is the number of nodes"));
  CHECK_THAT(errorOf([] { parseGridAxis("nodes=two"); }), Catch::Contains("nodes needs positive integers, got 'two'"));
  CHECK_THAT(errorOf([] { parseGridAxis("nodes=2,02"); }), Catch::Contains("nodes lists 2 and 02, the same number"));
  CHECK_THAT(errorOf([] { expandGrid(gridOf({"nodes=2"}), 0); }),
             Catch::Contains("--ranks-per-node must be at least 1, got 0"));
  CHECK_THAT(errorOf([] { expandGrid(gridOf({"nodes=1000"}), 1001); }),
             Catch::Contains("nodes=1000 × --ranks-per-node 1001 is more than 1000000 ranks"));
  CHECK(expandGrid(gridOf({"nodes=1000"}), 1000)[0].worldSize == 1000000);
}

TEST_CASE("the local launcher refuses more than one node and takes one", "[sweep][nodes]") {
  using dtbench::sweep::checkLocalPlacement;
  CHECK(errorOf([] { checkLocalPlacement(gridOf({"nodes=1", "batch=8"})); }).empty());
  CHECK(errorOf([] { checkLocalPlacement(gridOf({"world=4"})); }).empty());
  CHECK_THAT(errorOf([] { checkLocalPlacement(gridOf({"batch=8", "nodes=1,2"})); }),
             Catch::Contains("--grid: nodes=2 with --launcher local: the local launcher starts every rank on this "
                             "machine, so it cannot place ranks on 2 nodes; use --launcher slurm"));
}

TEST_CASE("mode is an axis: a dp point is one process driving the GPUs of its world", "[sweep][mode]") {
  const auto points = expandGrid(gridOf({"mode=ddp,dp", "world=1,4"}));
  REQUIRE(points.size() == 4);
  CHECK(points[1].name == "mode_ddp-world4");
  CHECK(points[1].worldSize == 4);
  CHECK(points[1].processGpus == 0);
  CHECK(points[3].name == "mode_dp-world4");
  CHECK(points[3].worldSize == 1);
  CHECK(points[3].processGpus == 4);
  CHECK(points[3].trainFlags == std::vector<std::string>{"--mode", "dp"});
  // Without a world axis a dp point drives one GPU, as a ddp point runs one rank.
  const auto alone = expandGrid(gridOf({"batch=64", "mode=dp"}));
  REQUIRE(alone.size() == 1);
  CHECK(alone[0].name == "batch64-mode_dp");
  CHECK(alone[0].processGpus == 1);
  CHECK(alone[0].worldSize == 1);
}

TEST_CASE("mode takes ddp or dp, and dp cannot be placed on nodes", "[sweep][mode]") {
  CHECK_THAT(errorOf([] { parseGridAxis("mode=ddp,dpp"); }),
             Catch::Contains("--grid: mode takes ddp or dp, got 'dpp'"));
  CHECK_THAT(errorOf([] { gridOf({"mode=dp", "nodes=1,2"}); }),
             Catch::Contains("mode=dp with a nodes axis: --mode dp is one process driving the GPUs of one machine"));
  CHECK_THAT(errorOf([] { gridOf({"nodes=1,2", "mode=ddp,dp"}); }), Catch::Contains("mode=dp with a nodes axis"));
  CHECK(errorOf([] { gridOf({"nodes=1,2", "mode=ddp"}); }).empty());
}
