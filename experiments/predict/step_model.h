#pragma once
// StepModel: one training step at world N on modelled hardware, built from a measured step
// (docs/predict.md, "The step model"). The step is the trainer's (docs/design.md, "Data flow of one
// training step"):
//
//   compute C = the measured compute × compute_scale, of which h2d + forward come first, then
//   backward B; the slowest of N ranks takes longer than the mean by the straggler term
//   E[max over N] − E[max over the input's ranks] of the per-rank compute (compute_spread.h; with a hardware
//   file's gpu_spread, a fleet's static per-GPU spread combined with it: gpu_spread.h), added to
//   its forward, so C and backward's start move by it; gradient p is ready at h2d + forward + ready(p) × scale. Buckets are those of
//   comm::assignBucketsBySize over the parameters (--bucket-mb, first bucket 1 MiB), or with
//   --bucket-layout fusion those of comm::assignBucketsByFusion (Horovod's rule, --bucket-mb its
//   threshold); bucket k is
//   launched when it and every bucket before it are ready (strict bucket order); with --no-overlap
//   one bucket of every gradient is launched when backward ends. One communication thread runs the
//   collectives one after another: the buffer broadcast (queued when backward starts), then bucket
//   k from max(launch_k, end of the previous collective) for its all-reduce time (with --compress its
//   compressed all-reduces, one after another, and its share of the encoding and decoding), the topology's
//   Schedule simulated on the network (network_model.h); `native` is the Schedule that models the
//   backend's own all-reduce (comm/topology/native_models.h) divided by its native efficiency. Pair averaging swaps parameters and buffers with one partner,
//   queued when backward starts (the mean over 8 seeded random matchings).
//   comm_exposed = max(0, end of the last collective − end of backward); comm_total = the union of
//   the collectives' intervals from launch to end; step = C + comm_exposed (data loading excluded,
//   as in the report's T). Every collective launches by backward's end, so from there to the last end
//   the thread runs collectives without a gap: comm_exposed is the sum of their parts after
//   backward's end, each split into bandwidth, latency and codec as the collective's own time is.
//   A hardware file's `framework` row (control_plane.h) delays every bucket's launch by its expected
//   wait for the next cycle, launch_k = max(launch_{k-1}, ready_k + wait), and lays the buckets out by
//   its fusion buffer; what the waits add to comm_exposed (against the same step without them) is then
//   the control part, and the rest is split as that step's. Its
//   `collective_library` row (collective_library.h) charges each native all-reduce of that backend as
//   the algorithm the library's cost model picks for its size at N: the ring as simulated, or the tree
//   at its cost model's time.
//
// World 1 has no collective: step = C.
//
// Large worlds: above kWholeScheduleRanks ranks, on links of one rate, a topology without a root
// (ring, clique, hierarchical, and native modelled as one of them) is simulated as one node's slice
// of its Schedule (Schedule::slicePeriod, network_model.h): every node does what node 0 does, so the
// time is the same to within the rounding of one element per chunk, and the cost grows with the
// Schedule's steps, not with steps × ranks. Worlds above kLargestWorld are refused.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/bucket_layout.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"

namespace dtbench::predict {

inline constexpr int kWholeScheduleRanks = 256;
inline constexpr int kLargestWorld = 65536;

struct WhatIf {
  std::optional<comm::Topology> topology;  // else the run's
  std::optional<comm::Backend> backend;    // else the run's (native efficiency)
  std::optional<run::Sync> sync;           // else the run's
  std::optional<double> bucketMb;       // else the run's
  std::optional<comm::BucketLayout> bucketLayout;  // else the run's (MeasuredStep::bucketLayout)
  std::optional<bool> overlap;          // else the run's
  std::optional<int64_t> elementBytes;  // bytes per gradient element, else each parameter's own
  std::optional<int64_t> segmentBytes;  // else the run's (same topology) or dtbench's default on the
                                        // hardware (its link_rate_bps across nodes: hardware.h)
  std::optional<run::Compression> compress;  // else the run's
  std::optional<int64_t> compressRank;       // else the run's
};

struct PredictedCollective {
  std::string name;  // "buffers", "bucket 0", ..., "pair exchange"
  int64_t bytes = 0;
  double launchS = 0, startS = 0, endS = 0;  // from the start of the step's compute
  double seconds = 0;                        // its own duration on the network
  // seconds = bandwidthS + latencyS + codecS: the network model's two parts (network_model.h; native:
  // each / its efficiency) and, under --compress, its share of the encoding and decoding.
  double bandwidthS = 0, latencyS = 0, codecS = 0;
};

struct StepPrediction {
  int world = 1, nodes = 1, ranksPerNode = 1;
  comm::Topology topology;
  comm::Backend backend = comm::Backend::kGloo;
  run::Sync sync = run::Sync::kSsgd;
  double bucketMb = 0;
  comm::BucketLayout bucketLayout = comm::BucketLayout::kDdp;
  bool overlap = true;
  int64_t segmentBytes = 0;
  double h2dS = 0, forwardS = 0, backwardS = 0, optimizerS = 0, computeS = 0;
  // What the spread of the ranks' compute adds to the step at this N: E[max over N ranks] less what the
  // input's compute held already (compute_spread.h), × compute_scale; the slowest rank's forward ends that
  // much later, so backward and every bucket start later too. Part of computeS.
  double stragglerS = 0;
  bool stragglerFitted = false;  // N beyond the samples: from the fitted tail
  // What a hardware file's gpu_spread (a fleet's static per-GPU variation) adds to stragglerS, within it
  // (hardware.h, docs/predict.md "A fleet's static spread"); 0 without the row.
  double fleetStragglerS = 0;
  double commTotalS = 0, commExposedS = 0, stepS = 0;
  // comm_exposed split as its collectives are: the part of each collective after backward's end, split
  // in proportion to its own bandwidth, latency and codec parts (docs/predict.md, "What limits
  // scaling"). They add up to commExposedS.
  double exposedBandwidthS = 0, exposedLatencyS = 0, exposedCodecS = 0;
  // What the framework's control plane (a Horovod cycle, control_plane.h) adds to comm_exposed: the
  // exposed communication with its waits less the same step's without them, whose bandwidth, latency
  // and codec parts the three above then are; with them it adds up to commExposedS. 0 without a
  // framework row.
  double exposedControlS = 0;
  // What the framework adds to every launch (control_plane.h; 0 without a framework row).
  double launchWaitS = 0;
  // The collective library's choice (collective_library.h), where the hardware file names one that
  // applies (native, its backend, ssgd): how many buckets' all-reduces it charged as each algorithm.
  bool libraryApplied = false;
  int ringCollectives = 0, treeCollectives = 0;
  // The framework row's line for the prediction's notes (ControlPlane::assumed); empty without one.
  std::string controlAssumed;
  int64_t stepsPerEpoch = 0;
  double epochS = 0, imagesPerS = 0;
  // --compress (a compressed step, as PowerSGD's after its --compress-start steps): what each bucket
  // sends comes from its row's bucketSends() (run/compression.h), as the trainer's record; the encoding and decoding, from the run's own measurement
  // of the same compression (scaled by compute_scale), else 0 (codecMeasured false).
  run::Compression compress{};  // none: the enum's first
  int64_t compressRank = 0;
  double codecS = 0;          // per step, on the communication thread
  bool codecMeasured = false;
  int64_t uncompressedGradBytes = 0;      // S of the same buckets without --compress
  int64_t gradBytes = 0;                  // bytes one step all-reduces (S of Table 3)
  int64_t elementBytes = 4;               // of the first bucket
  int64_t busiestRankBytes = 0;           // per step, the rank sending the most
  int64_t busiestLinkBytes = 0;           // per step, the busiest node link and direction
  double linkBoundS = 0;                  // Σ over all-reduces: busiest link's bytes / its bandwidth
  std::vector<PredictedCollective> collectives;

  // From the start of the step's compute: the slowest rank's h2d + forward, then its backward.
  double backwardStartS() const { return h2dS + forwardS + stragglerS; }
};

// Throws common::UsageError for a world that the hardware's ranks per node does not divide, one
// beyond its nodes, an unknown topology, or a sync the model does not cover.
StepPrediction predictStep(const MeasuredStep& run, const Hardware& hardware, int world, const WhatIf& whatIf);

}  // namespace dtbench::predict
