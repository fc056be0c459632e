#pragma once
// Hardware: the machine a prediction is for (docs/predict.md, "The hardware file"), read from a small
// JSON file:
//
//   {"description": "...", "nodes": 64, "ranks_per_node": 4,
//    "intra_node": {"bandwidth_gbit_s": 400, "latency_us": 3},
//    "inter_node": {"bandwidth_gbit_s": 100, "latency_us": 12},
//    "compute_scale": 1.0, "native_efficiency": {"gloo": 0.9, "mpi": 1.0}}
//
// Bandwidths are the payload one message gets on an idle link, in Gbit/s (10^9 bit/s); latencies in
// microseconds (network_model.h says how they are used); a class's optional `message_overhead_us` is
// the time a rank takes to issue one message of it (LogP's o, network_model.h), by default
// kDefaultNetworkOverheadS across nodes and 0 inside one. `nodes` (optional) is the most nodes the
// machine has; `compute_scale` (optional, default 1) multiplies the measured run's compute;
// `native_efficiency` (optional, per backend: gloo, mpi, nccl; default the backend's model's,
// comm/topology/native_models.h) divides the simulated time of the Schedule that models the
// backend's own all-reduce, for `--topology native`; `link_rate_bps` (optional) is the links' rate as
// dtbench itself reads it on that machine (the emulated cluster's cluster.json): it sets the pipeline
// segment across nodes as dtbench would there (comm::crossHostSegmentBytes), and without it the
// segment is the one dtbench takes where the rate is unknown, 128 KiB; `gpu` (optional) is what its
// ranks are, a key of the GPU peak table or "none" for CPU ranks (compute_device.h): predict refuses a
// step measured on another device, and takes the peak of MFU from it; `collective_library` (optional)
// is the library whose cost model picks a native all-reduce's algorithm (collective_library.h) and
// `framework` (optional) the framework whose control plane delays each launch (control_plane.h):
// absent, the native all-reduce is its backend's model (native_models.h) and nothing is charged for
// a control plane; `gpu_spread` (optional) is a fleet's static per-GPU variation, with its source
// (gpu_spread.h), charged in the straggler term on top of the input's measured spread. Any other key is
// refused (a misspelt key must not pass silently), except `description` and `calibration` (what
// --calibrate wrote; not read back).

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "comm/backends/backend.h"
#include "experiments/predict/collective_library.h"
#include "experiments/predict/compute_device.h"
#include "experiments/predict/control_plane.h"
#include "experiments/predict/gpu_spread.h"
#include "experiments/predict/network_model.h"

namespace dtbench::predict {

// The inter-node message overhead of a hardware file that gives none: NCCL's network post overhead
// (netOverhead in NVIDIA/nccl src/graph/tuning.cc, getNetOverhead: 1 us on every CPU but AMD's x86,
// 2 us there), the figure the DGX files give. Without it a clique's N − 1 messages a step would be
// issued at no cost (a 65,536-rank all-reduce in 0.34 ms). Inside a node NCCL's model names no cost
// a message beyond the hop's latency: 0.
inline constexpr double kDefaultNetworkOverheadS = 1e-6;

struct Hardware {
  std::string description;
  std::optional<int> nodes;
  int ranksPerNode = 1;
  LinkClass intra, inter;
  // Whether each class's messageOverheadS was given (a file's message_overhead_us, 0 included, or set
  // by whoever built the Hardware); false: absent from the file, the class's default was taken.
  bool intraOverheadGiven = true, interOverheadGiven = true;
  double computeScale = 1;
  std::map<std::string, double> nativeEfficiency;
  std::optional<double> linkRateBps;  // as dtbench reads it there; none: unknown to dtbench
  ComputeDevice device;               // "gpu": what its ranks are (compute_device.h); unknown when absent
  std::optional<CollectiveLibrary> collectiveLibrary;  // "collective_library"; none: the backend's model
  std::optional<ControlPlane> framework;               // "framework"; none: no control plane charged
  std::optional<GpuSpread> gpuSpread;                  // "gpu_spread"; none: the input's measured spread only

  // The file's native_efficiency of `backend` (a backend's name), else its model's.
  double efficiencyOf(const std::string& backend) const;
};

// The links of `hardware` as one collective over `world` ranks (`ranksPerNode` per node) on `backend`
// meets them: messages between nodes up to Open MPI's eager limit leave without a notice
// (comm::BackendRow::eagerBytesBetweenHosts), and a collective of the backend's own (`ownCollective`: a native
// all-reduce, the buffers' broadcast) whose backend keeps its receives posted ahead
// (comm::NativeModel::postedAhead: NCCL) sends every message, on either class, without one, and at no
// message overhead (its cost model's latency a step already holds the network's post overhead).
// dtbench's own Schedules and point-to-point exchanges keep the notices.
Network networkFor(const Hardware& hardware, int world, int ranksPerNode, comm::Backend backend, bool ownCollective);

// Throws common::UsageError naming `source` and the field, e.g. "hw.json: inter_node.bandwidth_gbit_s
// must be a positive number".
Hardware hardwareFromJson(const nlohmann::json& json, const std::string& source);

// The message overheads a prediction on `hardware` takes and where each came from, for the Assumed
// table: "inter-node 1 us, intra-node 0 us per message a rank issues: inter-node the default, ...".
std::string messageOverheadAssumed(const Hardware& hardware);
Hardware loadHardware(const std::string& path);
nlohmann::json toJson(const Hardware& hardware);

}  // namespace dtbench::predict
