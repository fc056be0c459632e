#pragma once
// The command line of `dtbench allreduce` (allreduce_command.cpp), parsed once into one struct.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/rank_discovery.h"
#include "experiments/rank_options.h"

namespace dtbench::experiments {

struct AllreduceOptions {
  std::string backend = "gloo";
  std::vector<std::string> topologies{"native"};
  std::vector<std::string> dtypes{"float32"};
  int64_t minBytes = 4096;
  int64_t maxBytes = 16 << 20;
  double factor = 2.0;
  std::vector<int64_t> counts;  // explicit element counts; overrides the byte sweep
  int warmupIters = 5;
  int iters = 20;
  bool check = false;
  int threads = 1;  // intra-op threads per rank
  std::optional<int64_t> segmentBytes;  // --segment-bytes; none: each topology's default; 0: whole chunks
  std::string csvPath, jsonPath, trafficPath, timelinePath;
  RankFlags ranks;  // who this rank is, rendezvous, Gloo, --ranks-per-host, --timeout
  bool help = false;
  std::string helpText;
};

// `env` supplies GLOO_SOCKET_IFNAME and DTBENCH_RANKS_PER_HOST (set by dtbench launch) as defaults.
// Throws trainer::UsageError naming the bad flag.
AllreduceOptions parseAllreduceOptions(const std::vector<std::string>& args, const comm::Environment& env);

// "4K" -> 4096, "64M", "1G", "123": bytes (K = 1024). Throws trainer::UsageError.
int64_t parseBytes(const std::string& flag, const std::string& text);

// The element counts of the sweep: min, min·factor, ... up to max bytes (at least one element
// each, duplicates dropped), or the explicit counts.
std::vector<int64_t> sweepCounts(const AllreduceOptions& options, int64_t elementBytes);

}  // namespace dtbench::experiments
