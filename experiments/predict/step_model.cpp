#include "experiments/predict/step_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "comm/backends/backend.h"
#include "comm/bucket_layout.h"
#include "comm/topology/link_bound.h"
#include "comm/topology/native_models.h"
#include "comm/topology/registry.h"
#include "common/usage_error.h"
#include "run/compression.h"

namespace dtbench::predict {
namespace {

constexpr int kPairMatchings = 8;

struct Bucket {
  int64_t elements = 0;
  int64_t elementBytes = 4;
  double readyS = 0;  // from the start of backward
  std::vector<size_t> parameters;  // indices into the run's parameters
};

// The buckets in launch order, with the stop flag in the last (as trainer/sync/bucketed_allreduce.h).
std::vector<Bucket> bucketsOf(const MeasuredStep& run, const WhatIf& w, double bucketMb, comm::BucketLayout rule,
                              bool overlap) {
  const auto bytesOf = [&](const MeasuredParameter& p) { return w.elementBytes.value_or(p.elementBytes); };
  std::vector<Bucket> buckets;
  if (!overlap) {
    Bucket all;
    all.elementBytes = bytesOf(run.parameters.front());
    all.elements = run.gradientElements();
    all.readyS = run.backwardS;
    for (size_t i = run.parameters.size(); i-- > 0;) all.parameters.push_back(i);
    buckets.push_back(all);
  } else {
    std::vector<comm::BucketTensor> tensors;
    std::map<int64_t, int> keys;
    for (const MeasuredParameter& p : run.parameters) {
      const int64_t b = bytesOf(p);
      const int key = keys.emplace(b, static_cast<int>(keys.size())).first->second;
      tensors.push_back({p.elements * b, key});
    }
    const auto layout = rule == comm::BucketLayout::kFusion
                            ? comm::assignBucketsByFusion(tensors, run::mibToBytes(bucketMb))
                            : comm::assignBucketsBySize(tensors, run::kFirstBucketBytes, run::mibToBytes(bucketMb));
    for (const std::vector<size_t>& indices : layout) {
      Bucket bucket;
      bucket.elementBytes = bytesOf(run.parameters[indices.front()]);
      bucket.parameters = indices;
      for (size_t i : indices) {
        bucket.elements += run.parameters[i].elements;
        // Hooks run inside backward: a median ready time past the median backward is backward's end.
        bucket.readyS = std::max(bucket.readyS, std::min(run.parameters[i].readyS, run.backwardS));
      }
      buckets.push_back(bucket);
    }
  }
  if (!buckets.empty()) buckets.back().elements += 1;
  return buckets;
}

// Every all-reduce of one prediction, memoised by size: buckets of equal size take equal time.
class AllreduceModel {
 public:
  // `library`: the collective library that picks the algorithm of each all-reduce (a native one of its
  // backend only; else null), on the bus bandwidth `busBytesPerSecond`.
  AllreduceModel(const comm::Topology& topology, comm::Backend backend, const Network& network,
                 double nativeEfficiency, int64_t segmentBytes, const CollectiveLibrary* library,
                 double busBytesPerSecond)
      : topology_(topology), network_(network), efficiency_(nativeEfficiency), segmentBytes_(segmentBytes),
        library_(library), busBytesPerSecond_(busBytesPerSecond) {
    const comm::HostLayout hosts = comm::hostsFromRanksPerHost(network.worldSize, network.ranksPerNode);
    // A large world's Schedule repeats every node for the topologies that have no root, on links of
    // one rate: one node's slice stands for it (docs/predict.md, "Large worlds").
    const bool slice = network.worldSize > kWholeScheduleRanks && network.nodeBytesPerSecond.empty() &&
                       (topology.native() || topology.sliceable());
    // Refused before its Schedule is made where the simulated ranks' messages could not fit in memory
    // (the rootless topologies send O(N) a rank; the trees and the star O(N) in all).
    const comm::Topology modelled = topology.native() ? comm::nativeTopology(backend, network.worldSize) : topology;
    if (const std::optional<int64_t> perRank = modelled.transfersPerRank(hosts)) {
      const int simulated = slice ? network.ranksPerNode : network.worldSize;
      checkSimulationFits(static_cast<double>(simulated) * static_cast<double>(*perRank), network, simulated,
                          modelled.name());
    }
    if (slice)
      schedule_ = topology.native() ? comm::nativeSlice(backend, hosts, network.ranksPerNode)
                                    : topology.slice(hosts, network.ranksPerNode);
    else
      schedule_ = topology.native() ? comm::nativeSchedule(backend, hosts) : topology.schedule(hosts);
  }

  const SimulatedCollective& run(int64_t elements, int64_t elementBytes) {
    const auto key = std::make_pair(elements, elementBytes);
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      SimulatedCollective c = simulateSchedule(schedule_, network_, elements, elementBytes,
                                               topology_.native() ? 0 : segmentBytes_);
      if (topology_.native()) {
        c.seconds /= efficiency_;
        c.bandwidthS /= efficiency_;
        c.latencyS /= efficiency_;
      }
      AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing;
      if (library_) {
        // The library's own choice for this size at this N; the tree is charged its cost model's time
        // (its bytes stay the ring's in Table 3's counts), divided by the backend's efficiency as the ring is.
        const TreeCost tree = ncclTreeCost(elements * elementBytes, network_.worldSize, network_.ranksPerNode,
                                           busBytesPerSecond_);
        const TreeCost charged{tree.latencyS / efficiency_, tree.bandwidthS / efficiency_};
        algorithm = chooseAlgorithm(*library_, c.seconds, charged);
        if (algorithm == AllreduceAlgorithm::kTree) {
          c.latencyS = charged.latencyS;
          c.bandwidthS = charged.bandwidthS;
          c.seconds = charged.seconds();
        }
      }
      algorithms_[key] = algorithm;
      it = memo_.emplace(key, std::move(c)).first;
    }
    return it->second;
  }

  // The algorithm run() charged for this size (the ring without a library).
  AllreduceAlgorithm algorithmOf(int64_t elements, int64_t elementBytes) const {
    const auto it = algorithms_.find(std::make_pair(elements, elementBytes));
    return it == algorithms_.end() ? AllreduceAlgorithm::kRing : it->second;
  }

 private:
  comm::Topology topology_;
  Network network_;
  double efficiency_;
  int64_t segmentBytes_;
  const CollectiveLibrary* library_;
  double busBytesPerSecond_;
  comm::Schedule schedule_;
  std::map<std::pair<int64_t, int64_t>, SimulatedCollective> memo_;
  std::map<std::pair<int64_t, int64_t>, AllreduceAlgorithm> algorithms_;
};

// One all-reduce of a bucket's (compressed) step.
struct BucketPart {
  std::string name;
  int64_t elements = 0;
  int64_t elementBytes = 4;
};

// What bucket `k` all-reduces in one step under `compress`: the row's bucketSends() (run/compression.h),
// the account the trainer records too, named for the tables ("bucket 2", "bucket 2 P").
std::vector<BucketPart> partsOf(const Bucket& bucket, size_t k, bool last, const MeasuredStep& run,
                                run::Compression compress, int64_t rank) {
  const run::CompressionRow& row = run::compressionRow(compress);
  run::BucketToSend send;
  send.elements = bucket.elements;
  send.carriesFlag = last;
  // A bucket is modelled by its bytes: 2-byte elements as float16.
  send.type = bucket.elementBytes == 2 ? comm::ElementType::kFloat16 : comm::ElementType::kFloat32;
  if (row.takesRank)  // what it sends follows from the gradients' shapes
    for (size_t i : bucket.parameters) {
      const MeasuredParameter& p = run.parameters[i];
      if (p.shape.empty() && p.elements != 1)
        throw common::UsageError(
            "--compress " + std::string(row.name) + " needs every gradient's shape, and " + run.path +
            " does not record " + p.name + "'s " +
            (run.described
                 ? "(its parameters give no shape): add each parameter's \"shape\", or write the description again "
                   "with dtbench predict --describe-model " + run.settings.model + " ... (a model of the zoo), "
                   "which records every shape"
                 : "(step_profile.json written before shapes were recorded, or no step_profile.json): train the run "
                   "again with this dtbench, or describe the step with dtbench predict --describe-model " +
                       run.settings.model + " ..., which records every shape"));
      send.shapes.push_back(p.shape);
    }
  const std::string name = "bucket " + std::to_string(k);
  std::vector<BucketPart> parts;
  for (const run::BucketSend& s : run::bucketSends(compress, send, rank)) {
    std::string what = s.what == "gradients" ? "" : s.what;
    if (what.size() == 1) what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));  // P, Q
    parts.push_back({what.empty() ? name : name + " " + what, s.elements, comm::bytesPerElement(s.type)});
  }
  return parts;
}

int64_t busiest(const std::vector<int64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// The union of [launch, end] over the collectives.
double unionSeconds(std::vector<PredictedCollective> cs) {
  std::sort(cs.begin(), cs.end(), [](const auto& a, const auto& b) { return a.launchS < b.launchS; });
  double total = 0, from = 0, to = -1;
  for (const PredictedCollective& c : cs) {
    if (c.launchS > to) {
      if (to > from) total += to - from;
      from = c.launchS;
      to = c.endS;
    } else {
      to = std::max(to, c.endS);
    }
  }
  if (to > from) total += to - from;
  return total;
}

// With drop_last, a world whose global batch exceeds the epoch deals each rank less than one batch:
// its epoch has no step, and T = 0 would say nothing.
[[noreturn]] void refuseEmptyEpoch(const MeasuredStep& run, int world) {
  throw common::UsageError(
      "--world " + std::to_string(world) + ": with drop_last the sampler deals each rank " +
      std::to_string(run.trainSamples) + " / " + std::to_string(world) + " = " +
      std::to_string(samplesPerRank(run, world)) + " images, fewer than one batch of " + std::to_string(run.batchSize) +
      ", so an epoch has no step: predict at most " + std::to_string(run.trainSamples / run.batchSize) +
      " ranks (whole batches), or a step of a smaller batch");
}

// A compression leaves nothing for pair averaging to compress, and says itself what an element sends,
// so --element-bytes beside it is refused: naming both flags where both were given, else the step's
// own compression, which the user may not know it has.
void refuseCompressionConflicts(const MeasuredStep& run, const WhatIf& w, const StepPrediction& p) {
  if (!run::compressionRow(p.compress).compresses) return;
  const std::string compress = run::compressionNames().name(p.compress);
  if (p.sync != run::Sync::kSsgd)
    throw common::UsageError("--compress " + compress + " compresses --sync ssgd's all-reduce; pair averaging has "
                             "none: predict --sync ssgd, or --compress none");
  if (!w.elementBytes) return;
  if (w.compress)
    throw common::UsageError("--element-bytes and --compress both say what a gradient element sends: give one");
  throw common::UsageError("--element-bytes: " + run.path + " compresses its gradients (" + compress + ", its " +
                           (run.described ? "settings.compress" : "config.json's compress") +
                           "), which says what an element sends: add --compress none to predict " +
                           std::to_string(*w.elementBytes) + "-byte gradients uncompressed, or leave --element-bytes "
                           "out to predict its " + compress);
}

}  // namespace

StepPrediction predictStep(const MeasuredStep& run, const Hardware& hw, int world, const WhatIf& w) {
  if (world < 1) throw common::UsageError("--world: world sizes must be whole numbers from 1");
  const int rpn = std::min(hw.ranksPerNode, world);
  if (world % rpn != 0)
    throw common::UsageError("--world " + std::to_string(world) + " is not a multiple of the hardware's ranks_per_node (" +
                             std::to_string(hw.ranksPerNode) + "): nodes = world / ranks_per_node must be whole");
  if (hw.nodes && world / rpn > *hw.nodes)
    throw common::UsageError("--world " + std::to_string(world) + " needs " + std::to_string(world / rpn) +
                             " nodes; the hardware file has " + std::to_string(*hw.nodes));
  StepPrediction p;
  p.world = world;
  p.ranksPerNode = rpn;
  p.nodes = world / rpn;
  const run::RunConfig& measured = run.settings;
  p.topology = w.topology.value_or(measured.comm.topology);
  p.backend = w.backend.value_or(measured.comm.connection.backend);
  p.sync = w.sync.value_or(measured.sync.kind);
  // A Horovod framework row lays the buckets out by its own fusion buffer, unless a what-if says otherwise.
  const bool horovod = hw.framework && hw.framework->horovod();
  p.bucketMb = w.bucketMb.value_or(horovod ? hw.framework->fusionMb : measured.sync.bucketMb);
  p.overlap = w.overlap.value_or(measured.sync.overlap);
  p.bucketLayout = w.bucketLayout.value_or(horovod ? comm::BucketLayout::kFusion : run.bucketLayout);
  p.launchWaitS = hw.framework ? hw.framework->launchWaitS() : 0;
  if (hw.framework) p.controlAssumed = hw.framework->assumed();
  const comm::Topology& topology = p.topology;
  p.segmentBytes = topology.native() ? 0
                   : w.segmentBytes ? *w.segmentBytes
                   : (topology == measured.comm.topology && run.segmentBytes) ? *run.segmentBytes
                                                                               : topology.defaultSegmentBytes(comm::hostsFromRanksPerHost(world, rpn), hw.linkRateBps);

  const double scale = hw.computeScale;
  p.h2dS = run.h2dS * scale;
  p.forwardS = run.forwardS * scale;
  p.backwardS = run.backwardS * scale;
  p.optimizerS = run.optimizerS * scale;
  const double measuredStraggler = run.spread.stragglerS(world);
  const double straggler = hw.gpuSpread ? hw.gpuSpread->stragglerS(run.spread, run.computeS, world) : measuredStraggler;
  p.stragglerS = straggler * scale;
  p.fleetStragglerS = (straggler - measuredStraggler) * scale;
  p.stragglerFitted = run.spread.known() && run.spread.fitted(world);
  p.computeS = run.computeS * scale + p.stragglerS;
  p.stepsPerEpoch = stepsPerEpoch(run, world);
  if (p.stepsPerEpoch == 0) refuseEmptyEpoch(run, world);

  p.compress = w.compress.value_or(measured.sync.compress);
  p.compressRank = w.compressRank.value_or(measured.sync.compressRank);
  refuseCompressionConflicts(run, w, p);
  // The encoding and decoding: the run's own, where it measured this compression at this rank.
  if (run::compressionRow(p.compress).compresses && run.compressS && measured.sync.compress == p.compress &&
      (!run::compressionRow(p.compress).takesRank || measured.sync.compressRank == p.compressRank)) {
    p.codecS = *run.compressS * hw.computeScale;
    p.codecMeasured = true;
  }
  const std::vector<Bucket> buckets = bucketsOf(run, w, p.bucketMb, p.bucketLayout, p.overlap);
  std::vector<std::vector<BucketPart>> parts;
  int64_t bucketElements = 0;
  for (size_t k = 0; k < buckets.size(); ++k) {
    parts.push_back(partsOf(buckets[k], k, k + 1 == buckets.size(), run, p.compress, p.compressRank));
    for (const BucketPart& part : parts.back()) p.gradBytes += part.elements * part.elementBytes;
    p.uncompressedGradBytes += buckets[k].elements * buckets[k].elementBytes;
    bucketElements += buckets[k].elements;
  }
  if (!parts.empty() && !parts.front().empty()) p.elementBytes = parts.front().front().elementBytes;

  if (world > 1) {
    // The all-reduce is the backend's own only under `native`; the buffers' broadcast always is, and
    // the pair exchange is point to point.
    const Network network = networkFor(hw, world, rpn, p.backend, p.topology.native());
    const Network ownCollective = networkFor(hw, world, rpn, p.backend, true);
    const Network pointToPoint = networkFor(hw, world, rpn, p.backend, false);
    const double backwardStart = p.backwardStartS();
    const double backwardEnd = backwardStart + p.backwardS;
    double free = backwardStart;  // when the communication thread is next idle
    const double efficiency = hw.efficiencyOf(comm::name(p.backend));
    std::vector<int64_t> rankBytes(world, 0), up(p.nodes, 0), down(p.nodes, 0);
    // A collective on the communication thread: the network's time for `c` / `efficiencyOf` (a native
    // collective's efficiency, else 1), then `codec` seconds.
    const auto add = [&](const std::string& name, int64_t bytes, double launch, const SimulatedCollective& c,
                         double efficiencyOf, double codec) {
      PredictedCollective pc{name, bytes, launch, std::max(launch, free), 0, 0};
      pc.bandwidthS = c.bandwidthS / efficiencyOf;
      pc.latencyS = c.latencyS / efficiencyOf;
      pc.codecS = codec;
      pc.seconds = c.seconds / efficiencyOf + codec;
      pc.endS = pc.startS + pc.seconds;
      free = pc.endS;
      p.collectives.push_back(pc);
      for (int r = 0; r < world; ++r) rankBytes[r] += c.bytesSent[r];
      for (int k = 0; k < p.nodes; ++k) {
        up[k] += c.nodeUp[k];
        down[k] += c.nodeDown[k];
      }
    };
    if (p.sync == run::Sync::kSsgd) {
      if (run.bufferElementsKnown && run.bufferElements > 0) {
        const SimulatedCollective c = simulateSchedule(binomialBroadcastSchedule(world), ownCollective, run.bufferElements, 4, 0);
        add("buffers", run.bufferElements * 4, backwardStart, c, efficiency, 0);
      }
      // The collective library picks the algorithm of its own backend's native all-reduce.
      const CollectiveLibrary* library =
          hw.collectiveLibrary && topology.native() && hw.collectiveLibrary->name == comm::name(p.backend)
              ? &*hw.collectiveLibrary
              : nullptr;
      p.libraryApplied = library != nullptr;
      // The bus bandwidth a ring over these ranks meets: a rank's port inside one node, else the slower class.
      const double busBytesPerSecond =
          p.nodes == 1 ? hw.intra.bytesPerSecond
                       : rpn == 1 ? hw.inter.bytesPerSecond : std::min(hw.intra.bytesPerSecond, hw.inter.bytesPerSecond);
      AllreduceModel allreduce(topology, p.backend, network, efficiency, p.segmentBytes, library, busBytesPerSecond);
      double launch = backwardStart;
      for (size_t k = 0; k < buckets.size(); ++k) {
        // Launched once it and the buckets before it are ready, after the framework's wait (0 without one).
        launch = std::max(launch, (p.overlap ? backwardStart + buckets[k].readyS * scale : backwardEnd) + p.launchWaitS);
        // The bucket's share of the step's encoding and decoding, by its elements, on the communication
        // thread with its all-reduces (charged to its last one).
        const double codec = bucketElements > 0 ? p.codecS * static_cast<double>(buckets[k].elements) /
                                                      static_cast<double>(bucketElements)
                                                : 0;
        for (size_t j = 0; j < parts[k].size(); ++j) {
          const BucketPart& part = parts[k][j];
          const SimulatedCollective& c = allreduce.run(part.elements, part.elementBytes);
          std::string name = part.name;
          if (library) {
            const AllreduceAlgorithm algorithm = allreduce.algorithmOf(part.elements, part.elementBytes);
            ++(algorithm == AllreduceAlgorithm::kTree ? p.treeCollectives : p.ringCollectives);
            name += std::string(" (") + algorithmName(algorithm) + ")";
          }
          add(name, part.elements * part.elementBytes, launch, c, 1, j + 1 == parts[k].size() ? codec : 0);
          // The bound of Table 3 (comm/topology/link_bound.h): the busiest node link's bytes over its
          // bandwidth. The simulation counted the bytes over each node's link as hostLinkBytes does (the
          // Schedule's transfers between nodes; native: its backend's model).
          if (p.nodes > 1)
            p.linkBoundS +=
                static_cast<double>(std::max(busiest(c.nodeUp), busiest(c.nodeDown))) / hw.inter.bytesPerSecond;
        }
      }
    } else {
      // Pair averaging: parameters and buffers, both ways, with one partner; the mean of seeded matchings.
      const int64_t elements = run.gradientElements() + run.bufferElements;
      std::mt19937_64 random(20261126);
      SimulatedCollective mean;
      for (int m = 0; m < kPairMatchings; ++m) {
        std::vector<int> order(world);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), random);
        std::vector<int> partner(world, -1);
        for (int i = 0; i + 1 < world; i += 2) {
          partner[order[i]] = order[i + 1];
          partner[order[i + 1]] = order[i];
        }
        const SimulatedCollective c = simulateSchedule(pairExchangeSchedule(partner), pointToPoint, elements, 4, 0);
        if (m == 0) {
          mean = c;  // its bytes: the first matching's
          mean.seconds = mean.bandwidthS = mean.latencyS = 0;
        }
        mean.seconds += c.seconds / kPairMatchings;
        mean.bandwidthS += c.bandwidthS / kPairMatchings;
        mean.latencyS += c.latencyS / kPairMatchings;
      }
      add("pair exchange", elements * 4, backwardStart, mean, 1, 0);
    }
    double last = backwardEnd;
    for (const PredictedCollective& c : p.collectives) last = std::max(last, c.endS);
    p.commExposedS = last - backwardEnd;
    for (const PredictedCollective& c : p.collectives) {
      const double exposed = std::max(0.0, c.endS - std::max(c.startS, backwardEnd));
      if (exposed <= 0 || c.seconds <= 0) continue;
      p.exposedBandwidthS += exposed * (c.bandwidthS / c.seconds);
      p.exposedLatencyS += exposed * (c.latencyS / c.seconds);
      p.exposedCodecS += exposed * (c.codecS / c.seconds);
    }
    // The framework's waits: what they add to the exposed communication is the control part, the rest
    // split as the same step without them splits (its buckets, its algorithms). A later launch never ends
    // the thread's work earlier, so the part is never negative.
    if (p.launchWaitS > 0) {
      Hardware noWait = hw;
      noWait.framework->cycleS = 0;
      WhatIf sameBuckets = w;
      sameBuckets.bucketLayout = p.bucketLayout;
      sameBuckets.bucketMb = p.bucketMb;
      const StepPrediction q = predictStep(run, noWait, world, sameBuckets);
      p.exposedControlS = std::max(0.0, p.commExposedS - q.commExposedS);
      p.exposedBandwidthS = q.exposedBandwidthS;
      p.exposedLatencyS = q.exposedLatencyS;
      p.exposedCodecS = q.exposedCodecS;
    }
    p.commTotalS = unionSeconds(p.collectives);
    p.busiestRankBytes = busiest(rankBytes);
    p.busiestLinkBytes = std::max(busiest(up), busiest(down));
  }
  p.stepS = p.computeS + p.commExposedS;
  p.epochS = p.stepS * static_cast<double>(p.stepsPerEpoch);
  // A rank's step takes its whole batch, or all it holds where the global batch exceeds the epoch.
  const int64_t imagesPerRankStep = std::min<int64_t>(run.batchSize, samplesPerRank(run, world));
  p.imagesPerS = p.stepS > 0 ? static_cast<double>(imagesPerRankStep) * world / p.stepS : 0;
  return p;
}

}  // namespace dtbench::predict
