#pragma once
// The all-reduce benchmark of `dtbench allreduce` (nccl-tests' harness; docs/reference.md,
// "Bandwidth definitions"): for every element type and topology, a sweep of message sizes, each
// with warm-up all-reduces, timed ones and optionally an exact check of every element; rows printed
// as they are measured, then the traffic matrix, and on request CSV, JSON, traffic.csv and
// traffic_timeline.csv.
//
// Timing (--timing): `each` (the default) times every all-reduce on its own (the buffer refilled
// with ones between them, outside the timed interval), takes the mean over the iterations on each
// rank and the maximum over ranks: the slowest rank's time of one all-reduce on fresh data. `loop`
// times as nccl-tests does: after a barrier, the iterations back to back on one buffer (of zeros,
// so repeated sums stay finite) as one interval, divided by the iterations, averaged over ranks:
// successive all-reduces may overlap their ends and starts, and no rank's slowness dominates.
// Columns (defined once, here and in --help): size = bytes per rank (count x element size),
// time_us = the time of one all-reduce as --timing says; algbw = size / time (GB/s, GB = 10^9
// bytes); busbw = algbw x 2(N-1)/N (comm/topology/ring.h: the ring's bytes per rank, comparable
// across world sizes); #wrong = elements that differ from the exact sum (N/A without --check);
// min, max, p99 (us), cv (%) and noisy: the iterations' times under --timing each
// (iteration_spread.h), "-" under loop; in the CSV and JSON iter_min_us, iter_max_us, iter_p99_us,
// iter_cv_pct and noisy, last.
// On the emulated cluster (DTBENCH_CLUSTER names its cluster.json, common/cluster_file.h, and every
// rank's real host is a node of it): bound = the busbw that the hosts' shaped links allow for the
// row's topology and size (comm/topology/link_bound.h; GB/s), of_bound = busbw / bound; "-" (empty
// in the CSV, null in the JSON) off the cluster, with --ranks-per-host (emulated hosts have no link),
// when every rank is on one host or a link is not shaped. The CSV's and JSON's link_rate_bps is the
// slowest link among the run's hosts (empty / null off the cluster). Last, in the CSV and JSON only:
// nodes = the number of distinct real host names of the ranks (also under --ranks-per-host), and
// segment_bytes = the pipeline segment the executor used for a point-to-point topology (its
// default or --segment-bytes; 0: whole chunks), empty / null for native, and timing (each or loop).
//
// Check values: rank r's element i is (i mod 7 + 1)(r + 1), so every sum is an integer below 256
// for up to 8 ranks, exact in float32, float16 and bfloat16, and the check compares for equality.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/element_type.h"
#include "comm/topology/registry.h"

namespace dtbench::experiments {

struct AllreduceSettings {
  std::vector<comm::Topology> topologies{comm::Topology()};
  std::vector<comm::ElementType> dtypes{comm::ElementType::kFloat32};
  int64_t minBytes = 4096;
  int64_t maxBytes = 16 << 20;
  double factor = 2.0;
  std::vector<int64_t> counts;  // explicit element counts; overrides the byte sweep
  int warmupIters = 5;
  int iters = 20;
  bool loopTiming = false;  // --timing loop (see above); false: each
  bool check = false;
  int threads = 1;                      // intra-op threads per rank
  std::optional<int64_t> segmentBytes;  // none: each topology's default; 0: whole chunks
  std::string csvPath, jsonPath, trafficPath, timelinePath;
};

// The most sizes a byte sweep may have (nccl-tests' -b 1 -e 1G -f 2 has 31): a --factor so close to
// 1 that the sweep would run for days is refused instead.
constexpr int kMaxSweepSizes = 1000;

// The element counts of the sweep: min, min·factor, ... up to max bytes (at least one element
// each, duplicates dropped), or the explicit counts. Throws common::UsageError naming the flags
// when min bytes < 1 or factor <= 1 (the sweep would never end) or the sweep has more than
// kMaxSweepSizes sizes.
std::vector<int64_t> sweepCounts(const AllreduceSettings& settings, int64_t elementBytes);

// Throws common::UsageError naming the flag when a file of --csv, --json, --traffic or --timeline
// cannot be opened for writing; rank 0, which writes them, calls it before the benchmark starts.
// An existing file is left as it is, and a missing one is not left behind.
void checkOutputsWritable(const AllreduceSettings& settings);

// Runs the benchmark on every rank of `communicator` (collective; rank 0 prints and writes). Hosts
// are emulated as groups of `ranksPerHost` ranks, or with 0 taken from the real host names.
// Throws common::UsageError when DTBENCH_CLUSTER names a file that cannot be read or is malformed.
// Returns the number of wrong elements over every size, topology and type (0 without --check).
// Throws common::UsageError when the only topology and type asked for are a native all-reduce the
// backend does not take.
int64_t runAllreduceBenchmark(comm::Communicator& communicator, int ranksPerHost, const AllreduceSettings& settings,
                              double timeoutS);

}  // namespace dtbench::experiments
