#pragma once
// CollectiveLibrary: which all-reduce algorithm the collective library picks for a bucket of a given
// size at N ranks, and what that algorithm costs (docs/predict.md, "The collective library and the
// framework"). A hardware or system file names it in its optional `collective_library` row:
//
//   "collective_library": {"name": "nccl", "release": "2.28"}
//
// It applies to `--topology native` on the backend of its name (nccl) under --sync ssgd: every other
// collective is dtbench's own Schedule, or the buffers' broadcast, and is charged as before.
//
// NCCL picks, per call, the algorithm its own cost model (src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime) says is fastest: time = latency + bytes / algorithm bandwidth. With the Simple
// protocol (the one the system files' latencies are of), over R ranks a node and `nodes` nodes:
//
//   ring  2(N − 1) steps, each of one hop's latency (its slowest: the network's across nodes, the
//         plateau factor ×1.4 or ×1.9 of a large multi-node ring already inside the file's per-step
//         latency), and 2(N − 1)/N × bytes over the bus bandwidth: exactly what the network model
//         simulates for NCCL's native ring (native_models.h), so the ring is charged as it always was;
//   tree  2·((R − 1)·intra hop + floor(log2(nodes))·network hop) and 2 × bytes over the bus bandwidth ×
//         0.92 (NCCL's tree all-reduce factor) × NCCL's tree correction for the bucket's size (its
//         treeCorrectionFactor, Simple row, from 64 B up to 512 MiB; 1 outside it), the hops the tree's own
//         (2.28, Simple: 4.0 µs inside a node over NVLink or PCIe, 14.0 µs across nodes).
//
// Both leave out NCCL's base latency of a call (8.4 µs for either with Simple), as the network model
// always has: the choice, a comparison, does not move. The bus bandwidth is the network model's: the
// intra-node class's inside one node, else the lesser of the two classes. Trees exist from NCCL 2.4:
// a release before it (Horovod's 2017 runs used 2.0–2.1) has the ring only. A release whose tree
// constants are not in kNcclTreeReleases is refused, naming those that are.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/predict/json_fields.h"

namespace dtbench::predict {

enum class AllreduceAlgorithm { kRing, kTree };

const char* algorithmName(AllreduceAlgorithm algorithm);

struct CollectiveLibrary {
  std::string name = "nccl";  // the backend it is the library of
  int releaseMajor = 2, releaseMinor = 28;
  std::string release = "2.28";  // as the file wrote it

  // Trees exist from NCCL 2.4.
  bool hasTree() const { return releaseMajor > 2 || (releaseMajor == 2 && releaseMinor >= 4); }
};

// NCCL's tree all-reduce cost, without the call's base latency (Simple protocol).
struct TreeCost {
  double latencyS = 0, bandwidthS = 0;
  double seconds() const { return latencyS + bandwidthS; }
};

// `bytes` over `world` ranks, `ranksPerNode` a node, on a bus bandwidth of `busBytesPerSecond`.
TreeCost ncclTreeCost(int64_t bytes, int world, int ranksPerNode, double busBytesPerSecond);

// NCCL's treeCorrectionFactor (Simple) for an all-reduce of `bytes`: 1 below 64 B and from 512 MiB.
double ncclTreeCorrection(int64_t bytes);

// The algorithm `library` picks for `bytes` at `world` ranks, given the ring's charged time
// (`ringSeconds`, the network model's) and the tree's cost: the ring where no tree exists, else the
// cheaper (the ring on a tie, and always on one rank per world or one node's ring of 2).
AllreduceAlgorithm chooseAlgorithm(const CollectiveLibrary& library, double ringSeconds, const TreeCost& tree);

// The file's `collective_library` row; refusals name the key (common::UsageError through `f`).
CollectiveLibrary collectiveLibraryFromJson(const nlohmann::json& row, const JsonFields& f);
nlohmann::json toJson(const CollectiveLibrary& library);

}  // namespace dtbench::predict
