#include "trainer/config_json.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/cuda.h>

#include "comm/backends/backend.h"
#include "comm/backends/make_communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/impairment/impairment.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "common/cluster_file.h"
#include "common/named_values.h"
#include "models/registry.h"
#include "trainer/environment.h"
#include "trainer/sync/bucketed_allreduce.h"

namespace dtbench::trainer {
namespace {

// "link_rate_bps" and "cluster_file" (docs/run-directory.md): the emulated cluster's link rate of
// each of the run's hosts, by the real host names, and the cluster.json they come from; both null
// off the cluster (common/cluster_file.h has the rule; rank 0, which writes config.json, warns).
void describeClusterLinks(nlohmann::json& json, const std::vector<std::string>& hostNames) {
  const common::ClusterLinks links =
      common::clusterLinksFromVariable(std::getenv(common::kClusterVariable), hostNames, &std::cerr);
  json["cluster_file"] = links.file ? nlohmann::json(*links.file) : nlohmann::json(nullptr);
  if (!links.onCluster()) {
    json["link_rate_bps"] = nullptr;
    return;
  }
  nlohmann::json rates = nlohmann::json::object();
  for (const common::HostLink& link : links.hosts) {
    const std::optional<double> rate = link.linkRateBps;
    // Whole bit rates as integers (1000000000, not 1e9), as cluster.json has them.
    if (!rate)
      rates[link.host] = nullptr;
    else if (*rate == std::floor(*rate) && *rate < 9e18)
      rates[link.host] = static_cast<int64_t>(*rate);
    else
      rates[link.host] = *rate;
  }
  json["link_rate_bps"] = rates;
}

// The Slurm job this rank runs in, as sacct names it: "1234", an array task "1234_5" (sacct's JobID
// for arrays), null off Slurm. The report joins runs with accounting through it (docs/report.md).
nlohmann::json slurmJobId() {
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array && *array && task && *task) return std::string(array) + "_" + task;
  const char* job = std::getenv("SLURM_JOB_ID");
  return job && *job ? nlohmann::json(std::string(job)) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json toJson(const RunConfig& config) {
  const DataConfig& d = config.data;
  const OptimizerConfig& o = config.optimizer;
  const comm::BackendOptions& connection = config.comm.connection;
  const comm::Impairment& impairment = config.impairment;
  return {
      {"model", config.model},
      {"dataset", datasetNames().name(d.dataset)},
      {"data_dir", d.dir},
      {"synthetic_train_size", d.syntheticTrainSize},
      {"synthetic_test_size", d.syntheticTestSize},
      {"device", deviceNames().name(config.device)},
      {"workers", d.workers},
      {"data_on_device", d.onDevice},
      {"download", d.download},
      {"download_url", d.downloadUrl},
      {"download_md5", d.downloadMd5},
      {"optimizer", optimizerNames().name(o.kind)},
      {"lr", o.lr},
      {"momentum", o.momentum},
      {"weight_decay", o.weightDecay},
      {"epochs", config.epochs},
      {"max_steps", config.maxSteps},
      {"batch_size", d.batchSize},
      {"test_batch_size", d.testBatchSize},
      {"drop_last", d.dropLast},
      {"evaluate", config.evaluate},
      {"seed", config.seed},
      {"threads", config.threads},
      {"amp", ampNames().name(config.precision.amp)},
      {"channels_last", config.precision.channelsLast},
      {"out", config.outDir},
      {"world_size", config.worldSize()},
      {"backend", comm::name(connection.backend)},
      {"topology", config.comm.topology.name()},
      {"ranks_per_host", config.comm.ranksPerHost},
      {"gloo_iface", connection.glooIface},
      {"gloo_threads", connection.glooThreads},
      {"timeout_s", connection.timeoutS},
      {"message_log", connection.messageLog.empty() ? nlohmann::json(nullptr) : nlohmann::json(connection.messageLog)},
      {"inject_delay_ms", impairment.delayMs},
      {"inject_rate_gbps", impairment.rateGbps},
      {"inject_loss_pct", impairment.lossPercent},
      {"inject_rto_ms", impairment.rtoMs},
      {"sync", syncNames().name(config.sync.kind)},
      {"mode", modeNames().name(config.mode)},
      {"overlap", config.sync.overlap},
      {"bucket_mb", config.sync.bucketMb},
      {"local_bn_stats", config.sync.localBnStats},
      {"check_every", config.sync.checkEvery},
      {"timeline", config.timeline},
      {"checkpoint_every", config.checkpointEvery},
      {"command_line", config.commandLine},
  };
}

nlohmann::json describeRun(const RunConfig& config, const std::string& allocator, const torch::nn::Module& model,
                           const data::DatasetSplits& data, const World* world, const GradientSync* sync) {
  nlohmann::json json = toJson(config);
  json["rank"] = 0;
  json["environment"] = describeEnvironment();
  json["environment"]["allocator"] = allocator;
  if (const char* algorithm = std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm");
      algorithm && world && config.comm.connection.backend == comm::Backend::kMpi)
    json["environment"]["mpi_iallreduce_algorithm"] = algorithm;  // comm/backends/mpi_communicator.cpp's Note
  json["slurm_job_id"] = slurmJobId();
  json["model_parameters"] = models::parameterStats(model).parameters;
  json["train_samples"] = data.train.size();
  json["test_samples"] = data.test.size();
  if (config.mode == ParallelMode::kDp) json["dp_devices"] = static_cast<int64_t>(torch::cuda::device_count());
  describeClusterLinks(json, world ? world->hostNames : std::vector<std::string>{comm::thisHostName()});
  if (world) {
    json["hosts"] = world->hostNames;
    json["hosts_emulated"] = config.comm.ranksPerHost > 0;
    // The point-to-point topologies' pipeline segment (comm/schedule_executor.h); null for native.
    json["segment_bytes"] =
        world->allreduce->schedule() ? nlohmann::json(world->allreduce->segmentBytes()) : nlohmann::json(nullptr);
    if (const auto* bucketed = dynamic_cast<const BucketedAllreduce*>(sync)) {
      json["buckets"] = bucketed->buckets();
      json["bucket_elements"] = bucketed->bucketElements();
      json["bucket_dtypes"] = bucketed->bucketTypes();
    }
  }
  return json;
}

}  // namespace dtbench::trainer
