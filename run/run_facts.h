#pragma once
// RunFacts: what a run found out when it started, recorded in config.json beside its settings
// (run/config_schema.h): the software it ran on, the model's size, the data's, the hosts, the
// emulated cluster's links and the gradient buckets. The trainer fills one and writes it with the
// settings (configJson); the report, predict and the sweep read both back (readConfigJson), each key
// typed here once (docs/run-directory.md defines them).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run_config.h"

namespace dtbench::run {

// The gradient buckets of --sync ssgd, in launch order.
struct BucketFacts {
  std::vector<std::vector<int64_t>> parameters;  // "buckets": parameter indices of each bucket
  std::vector<int64_t> elements;                 // "bucket_elements": the last one includes the stop flag
  std::vector<std::string> dtypes;               // "bucket_dtypes"
};

// Recorded by a run of several ranks (or one with a communicator: mpi, nccl).
struct WorldFacts {
  std::vector<std::string> hosts;       // "hosts": every rank's real host name
  bool hostsEmulated = false;           // "hosts_emulated": --ranks-per-host made the host layout
  std::optional<int64_t> segmentBytes;  // "segment_bytes": the point-to-point topologies' pipeline segment; null for native
  std::optional<BucketFacts> buckets;   // ssgd only
};

struct RunFacts {
  int rank = 0;                            // "rank": the rank that wrote config.json (0)
  nlohmann::json environment = nlohmann::json::object();  // "environment": versions, threads, build (an object)
  std::optional<std::string> slurmJobId;   // "slurm_job_id": as sacct names it; null off Slurm
  int64_t modelParameters = 0;             // "model_parameters": trainable elements
  int64_t trainSamples = 0;                // "train_samples"
  int64_t testSamples = 0;                 // "test_samples"
  std::optional<int64_t> dpDevices;        // "dp_devices": --mode dp only
  std::optional<std::string> clusterFile;  // "cluster_file": DTBENCH_CLUSTER's cluster.json; null off the cluster
  // "link_rate_bps": the emulated cluster's link rate of each of the run's hosts (null: not shaped);
  // absent (nullopt) off the cluster.
  std::optional<std::map<std::string, std::optional<double>>> linkRateBps;
  std::optional<WorldFacts> world;
};

// config.json as rank 0 writes it: every recorded setting, then the facts.
nlohmann::json configJson(const RunConfig& settings, const RunFacts& facts);

// A run's config.json, read back. A value that does not read as its key's type (or breaks its
// setting's rule) adds one sentence to `problems` and keeps the default; absent keys keep theirs (a run
// written before a key existed). A world of several ranks must list one host per rank.
struct RunRecord {
  RunConfig settings;
  RunFacts facts;
};
RunRecord readConfigJson(const nlohmann::json& config, std::vector<std::string>& problems);
// <runDirectory>/config.json read back (run/json_values.h's readJsonOrProblem, then readConfigJson).
RunRecord readConfigFile(const std::string& runDirectory, std::vector<std::string>& problems);

// The keys RunFacts writes: always, and only with a world (or with --mode dp, or --sync ssgd).
const std::vector<std::string>& factKeys();

}  // namespace dtbench::run
