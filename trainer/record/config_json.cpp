#include "trainer/record/config_json.h"

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/cuda.h>

#include "comm/backends/backend.h"
#include "comm/backends/make_communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/topology_allreduce.h"
#include "common/cluster_file.h"
#include "models/registry.h"
#include "run/run_facts.h"
#include "trainer/record/environment.h"
#include "trainer/sync/bucketed_allreduce.h"

namespace dtbench::trainer {
namespace {

// The emulated cluster's link rate of each of the run's hosts, by the real host names, and the
// cluster.json they come from; both absent off the cluster (common/cluster_file.h has the rule;
// rank 0, which writes config.json, warns).
void describeClusterLinks(run::RunFacts& facts, const std::vector<std::string>& hostNames) {
  const common::ClusterLinks links =
      common::clusterLinksFromVariable(std::getenv(common::kClusterVariable), hostNames, &std::cerr);
  facts.clusterFile = links.file;
  if (!links.onCluster()) return;
  facts.linkRateBps.emplace();
  for (const common::HostLink& link : links.hosts) (*facts.linkRateBps)[link.host] = link.linkRateBps;
}

// The Slurm job this rank runs in, as sacct names it: "1234", an array task "1234_5" (sacct's JobID
// for arrays), none off Slurm. The report joins runs with accounting through it (docs/report.md).
std::optional<std::string> slurmJobId() {
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array && *array && task && *task) return std::string(array) + "_" + task;
  const char* job = std::getenv("SLURM_JOB_ID");
  return job && *job ? std::optional(std::string(job)) : std::nullopt;
}

}  // namespace

nlohmann::json describeRun(const RunConfig& config, const std::string& allocator, const torch::nn::Module& model,
                           const data::DatasetSplits& data, const World* world, const GradientSync* sync,
                           std::vector<run::DeviceFacts> devices, std::optional<run::SpeedOfLight> speedOfLight) {
  RunConfig settings = config;
  if (world) {  // the World's rank and size are authoritative (trainer/world.h)
    settings.comm.connection.rank = world->rank();
    settings.comm.connection.worldSize = world->size();
  }
  run::RunFacts facts;
  facts.rank = 0;
  facts.environment = describeEnvironment();
  facts.environment["allocator"] = allocator;
  const comm::BackendRow& backend = comm::backendRow(config.comm.connection.backend);
  if (const char* value = backend.tuningVariable ? std::getenv(backend.tuningVariable) : nullptr; value && world)
    facts.environment[backend.recordedAs] = value;
  facts.slurmJobId = slurmJobId();
  facts.modelParameters = models::parameterStats(model).parameters;
  facts.trainSamples = data.train.size();
  facts.testSamples = data.test.size();
  facts.devices = std::move(devices);
  facts.speedOfLight = std::move(speedOfLight);
  if (config.mode == ParallelMode::kDp) facts.dpDevices = static_cast<int64_t>(torch::cuda::device_count());
  describeClusterLinks(facts, world ? world->hostNames : std::vector<std::string>{comm::thisHostName()});
  if (world) {
    run::WorldFacts& w = facts.world.emplace();
    w.hosts = world->hostNames;
    w.hostsEmulated = config.comm.ranksPerHost > 0;
    // The point-to-point topologies' pipeline segment (comm/schedule_executor.h); none for native.
    if (world->allreduce->schedule()) w.segmentBytes = world->allreduce->segmentBytes();
    if (const auto* bucketed = dynamic_cast<const BucketedAllreduce*>(sync)) {
      run::BucketFacts& buckets = w.buckets.emplace();
      for (const std::vector<size_t>& bucket : bucketed->buckets())
        buckets.parameters.emplace_back(bucket.begin(), bucket.end());
      buckets.elements = bucketed->bucketElements();
      buckets.dtypes = bucketed->bucketTypes();
      for (const std::vector<BucketCollective>& bucket : bucketed->bucketCollectives()) {
        std::vector<run::CollectiveFacts>& list = buckets.collectives.emplace_back();
        for (const BucketCollective& c : bucket) list.push_back({c.what, c.elements, comm::name(c.type)});
      }
    }
  }
  return run::configJson(settings, facts);
}

}  // namespace dtbench::trainer
