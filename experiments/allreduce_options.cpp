#include "experiments/allreduce_options.h"

#include <algorithm>
#include <cstdlib>

#include <cxxopts.hpp>

#include "comm/backend.h"
#include "comm/element_type.h"
#include "comm/topology/topology.h"
#include "experiments/flag_lists.h"
#include "experiments/rank_options.h"
#include "trainer/config.h"

namespace dtbench::experiments {
int64_t parseBytes(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double scale = 1;
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") scale = 1024;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) used = 0;
  if (used == 0 || value < 0)
    throw trainer::UsageError(flag + " takes a byte count like 4096, 4K, 64M or 1G, got '" + text + "'");
  return static_cast<int64_t>(value * scale);
}

std::vector<int64_t> sweepCounts(const AllreduceOptions& o, int64_t elementBytes) {
  if (!o.counts.empty()) return o.counts;
  std::vector<int64_t> counts;
  for (double bytes = static_cast<double>(o.minBytes); bytes <= static_cast<double>(o.maxBytes) * 1.0000001;
       bytes *= o.factor) {
    const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(bytes) / elementBytes);
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

AllreduceOptions parseAllreduceOptions(const std::vector<std::string>& args, const comm::Environment& env) {
  AllreduceOptions o;
  cxxopts::Options options("dtbench allreduce",
                           "All-reduce benchmark in the manner of nccl-tests: a size sweep per topology, warm-up,\n"
                           "timed iterations, an optional exact check of every element.\n\n"
                           "Columns: size = bytes per rank (count x element size), time_us = mean time of one\n"
                           "all-reduce (max over ranks), algbw = size / time (GB/s, GB = 10^9 bytes), busbw =\n"
                           "algbw x 2(N-1)/N (the ring's bytes per rank: comparable across world sizes), #wrong =\n"
                           "elements that differ from the exact sum (N/A without --check).\n\n"
                           "Run one process per rank: dtbench launch -n N -- dtbench allreduce ... (gloo), or\n"
                           "mpirun -np N dtbench allreduce --backend mpi ...");
  options.set_width(100);
  // clang-format off
  options.add_options("Benchmark")
    ("backend", "gloo, mpi or nccl", cxxopts::value<std::string>()->default_value(o.backend))
    ("topology", "Comma-separated list, or all: native, ring, tree, binary-tree-star, star, clique, hierarchical",
     cxxopts::value<std::string>()->default_value("native"))
    ("dtype", "Comma-separated list of float32, float16, bfloat16", cxxopts::value<std::string>()->default_value("float32"))
    ("b,min-bytes", "Smallest message (bytes; K, M, G suffixes)", cxxopts::value<std::string>()->default_value("4K"))
    ("e,max-bytes", "Largest message", cxxopts::value<std::string>()->default_value("16M"))
    ("f,factor", "Size multiplier between rows", cxxopts::value<double>()->default_value("2"))
    ("counts", "Explicit element counts instead of the byte sweep, e.g. 0,1,13,1000003",
     cxxopts::value<std::string>())
    ("warmup-iters", "Untimed all-reduces per size", cxxopts::value<int>()->default_value("5"))
    ("iters", "Timed all-reduces per size", cxxopts::value<int>()->default_value("20"))
    ("check", "Verify every element of one extra all-reduce per size against the exact sum")
    ("threads", "Intra-op threads per rank", cxxopts::value<int>()->default_value("1"))
    ("segment-bytes", "Pipeline segment of the point-to-point topologies (K, M suffixes; 0: whole chunks; "
     "auto: 1M for tree, star, binary-tree-star, hierarchical, whole chunks for ring, clique)",
     cxxopts::value<std::string>()->default_value("auto"));
  options.add_options("Output")
    ("csv", "Write the rows as CSV to FILE", cxxopts::value<std::string>())
    ("json", "Write the rows as JSON to FILE", cxxopts::value<std::string>())
    ("traffic", "Write traffic.csv (src,dst,bytes,kind) to FILE", cxxopts::value<std::string>())
    ("timeline", "Write traffic_timeline.csv (t_start_s,src,dst,bytes) to FILE", cxxopts::value<std::string>())
    ("h,help", "Show this help");
  // clang-format on
  addRankOptions(options, 60);
  std::vector<const char*> argv{"dtbench allreduce"};
  for (const auto& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    throw trainer::UsageError(std::string(e.what()) + " (see dtbench allreduce --help)");
  }
  if (!parsed.unmatched().empty())
    throw trainer::UsageError("unexpected argument '" + parsed.unmatched().front() + "' (see dtbench allreduce --help)");
  if (parsed.count("help")) {
    o.help = true;
    o.helpText = options.help();
    return o;
  }
  try {
    o.backend = parsed["backend"].as<std::string>();
    comm::checkBackendAvailable(o.backend);
    const std::string topology = parsed["topology"].as<std::string>();
    o.topologies = topology == "all" ? comm::topologyNames() : splitList(topology);
    if (o.topologies.empty()) throw trainer::UsageError("--topology needs at least one name");
    for (const std::string& t : o.topologies) comm::checkTopologyName(t);
    o.dtypes = splitList(parsed["dtype"].as<std::string>());
    if (o.dtypes.empty()) throw trainer::UsageError("--dtype needs at least one element type");
    for (const std::string& d : o.dtypes) comm::parseElementType(d);
  } catch (const trainer::UsageError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw trainer::UsageError(e.what());
  }
  o.minBytes = parseBytes("--min-bytes", parsed["min-bytes"].as<std::string>());
  o.maxBytes = parseBytes("--max-bytes", parsed["max-bytes"].as<std::string>());
  o.factor = parsed["factor"].as<double>();
  if (o.factor <= 1.0) throw trainer::UsageError("--factor must be greater than 1");
  if (o.maxBytes < o.minBytes) throw trainer::UsageError("--max-bytes must be at least --min-bytes");
  if (parsed.count("counts"))
    for (const std::string& c : splitList(parsed["counts"].as<std::string>())) {
      const int64_t count = parseBytes("--counts", c);
      o.counts.push_back(count);
    }
  o.warmupIters = parsed["warmup-iters"].as<int>();
  o.iters = parsed["iters"].as<int>();
  if (o.warmupIters < 0 || o.iters < 1) throw trainer::UsageError("--iters must be at least 1, --warmup-iters at least 0");
  o.check = parsed.count("check") > 0;
  o.threads = parsed["threads"].as<int>();
  if (o.threads < 1) throw trainer::UsageError("--threads must be at least 1");
  if (const std::string segment = parsed["segment-bytes"].as<std::string>(); segment != "auto")
    o.segmentBytes = parseBytes("--segment-bytes", segment);
  if (parsed.count("csv")) o.csvPath = parsed["csv"].as<std::string>();
  if (parsed.count("json")) o.jsonPath = parsed["json"].as<std::string>();
  if (parsed.count("traffic")) o.trafficPath = parsed["traffic"].as<std::string>();
  if (parsed.count("timeline")) o.timelinePath = parsed["timeline"].as<std::string>();
  o.ranks = readRankOptions(parsed, env);
  return o;
}

}  // namespace dtbench::experiments
