#include "experiments/predict/collective_library.h"

#include <cmath>


namespace dtbench::predict {
namespace {

// NCCL 2.28's cost model, Simple protocol (NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults):
// the tree's hop latency inside a node (hwLatencies NVLINK and PCI, Tree: both 4.0 us) and across nodes
// (NET, Tree: 14 us), and the factor on the tree all-reduce's bus bandwidth (ncclTopoTuneModel: 0.92).
constexpr double kTreeIntraHopS = 4.0e-6;
constexpr double kTreeNetworkHopS = 14.0e-6;
constexpr double kTreeBusBandwidthFactor = 0.92;
// A tree all-reduce moves its bytes up and back down: its algorithm bandwidth is half the bus bandwidth
// (ncclTopoTuneModel's ratio 0.5 for algorithms other than the ring).
constexpr double kTreeAlgorithmRatio = 0.5;
// treeCorrectionFactor[Simple], by floor(log2(bytes / 64)) from 0 to 22 (ncclTopoGetAlgoTime).
constexpr double kTreeCorrectionSimple[23] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                              .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

// The releases whose tree constants are above (those read); before 2.4 there is no tree at all.
constexpr const char* kNcclTreeReleases = "2.28";

int floorLog2(int64_t v) {
  int log = -1;
  while (v > 0) {
    v >>= 1;
    ++log;
  }
  return log;
}

}  // namespace

const char* algorithmName(AllreduceAlgorithm algorithm) {
  return algorithm == AllreduceAlgorithm::kTree ? "tree" : "ring";
}

double ncclTreeCorrection(int64_t bytes) {
  const int logSize = floorLog2(bytes >> 6);
  return logSize >= 0 && logSize < 23 ? kTreeCorrectionSimple[logSize] : 1.0;
}

TreeCost ncclTreeCost(int64_t bytes, int world, int ranksPerNode, double busBytesPerSecond) {
  const int nodes = world / ranksPerNode;
  TreeCost cost;
  cost.latencyS = 2 * ((ranksPerNode - 1) * kTreeIntraHopS + floorLog2(nodes) * kTreeNetworkHopS);
  cost.bandwidthS = static_cast<double>(bytes) /
                    (busBytesPerSecond * kTreeBusBandwidthFactor * kTreeAlgorithmRatio * ncclTreeCorrection(bytes));
  return cost;
}

AllreduceAlgorithm chooseAlgorithm(const CollectiveLibrary& library, double ringSeconds, const TreeCost& tree) {
  if (!library.hasTree()) return AllreduceAlgorithm::kRing;
  return tree.seconds() < ringSeconds ? AllreduceAlgorithm::kTree : AllreduceAlgorithm::kRing;
}

CollectiveLibrary collectiveLibraryFromJson(const nlohmann::json& row, const JsonFields& f) {
  if (!row.is_object())
    f.fail("collective_library must be an object {\"name\": \"nccl\", \"release\": \"2.28\"}");
  f.onlyKeys(row, {"name", "release"}, "collective_library.");
  CollectiveLibrary library;
  library.name = f.text(row, "name", "collective_library.");
  if (library.name != "nccl")
    f.fail("collective_library.name must be nccl (the one library whose cost model predict reads), not '" +
           library.name + "'");
  library.release = f.text(row, "release", "collective_library.");
  const std::string& r = library.release;
  const size_t dot = r.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 4 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(r.substr(0, dot)) || !digits(r.substr(dot + 1)))
    f.fail("collective_library.release must be MAJOR.MINOR, e.g. \"2.28\", not '" + r + "'");
  library.releaseMajor = std::stoi(r.substr(0, dot));
  library.releaseMinor = std::stoi(r.substr(dot + 1));
  if (library.hasTree() && r != kNcclTreeReleases)
    f.fail("collective_library.release '" + r + "': predict knows the tree's cost model of NCCL " +
           kNcclTreeReleases + " only (a release before 2.4 has no tree, and needs none)");
  if (library.releaseMajor < 2)
    f.fail("collective_library.release '" + r + "': NCCL before 2.0 ran inside one node only");
  return library;
}

nlohmann::json toJson(const CollectiveLibrary& library) {
  return {{"name", library.name}, {"release", library.release}};
}

}  // namespace dtbench::predict
