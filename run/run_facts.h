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
#include "run/run_segment.h"
#include "run/speed_of_light.h"

namespace dtbench::run {

// The gradient buckets of --sync ssgd, in launch order.
// One all-reduce of a bucket's step under --compress (trainer/sync/bucket_compression.h).
struct CollectiveFacts {
  std::string what;  // "gradients"; powersgd: "uncompressed", "p", "q"
  int64_t elements = 0;
  std::string dtype;  // comm/element_type.h's name
};

struct BucketFacts {
  std::vector<std::vector<int64_t>> parameters;  // "buckets": parameter indices of each bucket
  std::vector<int64_t> elements;                 // "bucket_elements": the last one includes the stop flag
  std::vector<std::string> dtypes;               // "bucket_dtypes"
  // "bucket_collectives": what one step of each bucket all-reduces (with --compress, its compressed
  // form; powersgd's first --compress-start steps send bucket_elements in float32 instead). Empty in
  // runs written before it was recorded, which all-reduced bucket_elements.
  std::vector<std::vector<CollectiveFacts>> collectives;
};

// Recorded by a run of several ranks (or one with a communicator: mpi, nccl).
struct WorldFacts {
  std::vector<std::string> hosts;       // "hosts": every rank's real host name
  bool hostsEmulated = false;           // "hosts_emulated": --ranks-per-host made the host layout
  std::optional<int64_t> segmentBytes;  // "segment_bytes": the point-to-point topologies' pipeline segment; null for native
  std::optional<BucketFacts> buckets;   // ssgd only
};

// The device one rank trained on, and the machine it shared (config.json's "devices", one per rank in
// rank order; absent from runs written before it was recorded). Keys of values that do not apply
// (a CPU's SM count, a GPU's cores) are left out.
struct DeviceFacts {
  std::string type;    // "type": "cpu" or "cuda"
  std::string model;   // "model": the GPU's name ("NVIDIA H100 80GB HBM3"), or the CPU's model name
  std::string host;    // "host": the rank's real host name
  std::string bootId;  // "boot_id": the host's boot id; ranks and runs with the same one shared a machine
  std::optional<int64_t> cores;    // "cores": the cores the rank could use (its affinity)
  std::optional<int64_t> threads;  // "threads": its intra-op threads
  // A GPU's (cudaDeviceProp, cudaDriverGetVersion, cudaRuntimeGetVersion):
  std::optional<int64_t> index;                     // "index": cuda:N as the rank saw it
  std::optional<int64_t> smCount;                   // "sm_count"
  std::optional<int64_t> memoryBytes;               // "memory_bytes"
  std::optional<double> clockMhz;                   // "clock_mhz": the SMs' peak clock
  std::optional<std::string> computeCapability;     // "compute_capability": "9.0"
  std::optional<std::string> driverVersion;         // "driver": the CUDA version the driver supports, "13.0"
  std::optional<std::string> cudaRuntimeVersion;    // "cuda_runtime": the runtime LibTorch loads, "13.0"

  // "cuda NVIDIA H100 80GB HBM3", "cpu AMD EPYC 7742 64-Core Processor": what a run ran on, for
  // grouping and messages.
  std::string label() const { return model.empty() ? type : type + " " + model; }
};

nlohmann::json deviceJson(const DeviceFacts& device);
// Throws std::invalid_argument "KEY takes ..., got ..." for a value of the wrong type.
DeviceFacts readDeviceJson(const nlohmann::json& device);

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
  std::vector<DeviceFacts> devices;  // "devices": one per rank; empty in runs written before it existed
  // "speed_of_light": the model's FLOPs and the peak they are measured against (run/speed_of_light.h);
  // absent in runs written before it existed.
  std::optional<SpeedOfLight> speedOfLight;
  // "segments": the run's stretches at one world (run/run_segment.h), written once a --resume changed the
  // world size (more than one); empty for a run of one world, whose settings say its world and batch.
  std::vector<RunSegment> segments;
};

// The device models of a run: every rank's label() ("cuda NVIDIA A100-SXM4-80GB"), the distinct ones
// joined by " + " in rank order; "" when the run recorded none.
std::string devicesLabel(const RunFacts& facts);

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
