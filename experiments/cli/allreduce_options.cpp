#include "experiments/cli/allreduce_options.h"

#include <cxxopts.hpp>

#include "comm/backends/backend.h"
#include "comm/element_type.h"
#include "comm/topology/registry.h"
#include "common/lists.h"
#include "common/machine_memory.h"
#include "common/named_values.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "trainer/record/environment.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>

namespace dtbench::experiments {

using common::UsageError;

// The largest byte count a flag takes: 1024G, beyond any host's memory and exact in a double.
constexpr double kMaxBytes = 1024.0 * 1024 * 1024 * 1024;

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
  if (suffix == "K" || suffix == "k")
    scale = 1024;
  else if (suffix == "M")
    scale = 1024.0 * 1024;
  else if (suffix == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    used = 0;
  // std::stod also reads "nan" and "inf"; a byte count is a whole number a tensor can hold.
  const double bytes = value * scale;
  if (used == 0 || !std::isfinite(bytes) || bytes < 0 || bytes != std::floor(bytes) || bytes > kMaxBytes)
    throw UsageError(flag + " takes a whole byte count like 4096, 4K, 64M or 1G (at most 1024G), got '" + text + "'");
  return static_cast<int64_t>(bytes);
}

namespace {

// The items of a comma-separated flag value; an empty value or an empty item ("ring,,tree") is
// refused rather than dropped, so that a list never falls back to the default unseen.
std::vector<std::string> listOf(const std::string& flag, const std::string& text, const std::string& example) {
  const std::vector<std::string> items = common::splitList(text);
  size_t commas = 0;
  for (char c : text) commas += c == ',' ? 1 : 0;
  if (items.empty() || items.size() != commas + 1)
    throw UsageError(flag + " needs a comma-separated list without empty items, e.g. " + example + ", got '" + text +
                     "'");
  return items;
}

}  // namespace

AllreduceOptions parseAllreduceOptions(const std::vector<std::string>& args, const comm::Environment& env) {
  cxxopts::Options options("dtbench allreduce",
                           "All-reduce benchmark in the manner of nccl-tests: a size sweep per topology, warm-up,\n"
                           "timed iterations, an optional exact check of every element.\n\n"
                           "Columns: size = bytes per rank (count x element size), time_us = mean time of one\n"
                           "all-reduce (max over ranks), algbw = size / time (GB/s, GB = 10^9 bytes), busbw =\n"
                           "algbw x 2(N-1)/N (the ring's bytes per rank: comparable across world sizes), #wrong =\n"
                           "elements that differ from the exact sum (N/A without --check). Per iteration (--timing\n"
                           "each): min, max, p99 (us) and cv (%) of the iterations' times, each the slowest rank's,\n"
                           "and 'noisy' as nccl-tests flags it: cv above 5 % or an iteration above 1.5x the median.\n"
                           "On the emulated cluster (DTBENCH_CLUSTER names its cluster.json and every rank runs on\n"
                           "one of its nodes): bound = the busbw the nodes' shaped links allow for the topology and\n"
                           "size (GB/s), of_bound = busbw / bound; '-' off the cluster, with --ranks-per-host, or\n"
                           "with every rank on one host. CSV and JSON add link_rate_bps (the slowest link),\n"
                           "bound_busbw_gbps and of_bound, empty or null off the cluster, then nodes (distinct\n"
                           "real host names of the ranks) and segment_bytes (the point-to-point topologies'\n"
                           "pipeline segment, 0 for whole chunks; empty or null for native), timing, and the\n"
                           "per-iteration iter_min_us, iter_max_us, iter_p99_us, iter_cv_pct and noisy (empty\n"
                           "or null under --timing loop).\n\n"
                           "Run one process per rank: dtbench launch -n N -- dtbench allreduce ... (gloo), or\n"
                           "mpirun -np N dtbench allreduce --backend mpi ...");
  options.set_width(100);
  // clang-format off
  options.add_options("Benchmark")
    ("backend", comm::backendNames().joined(", ", " or "), cxxopts::value<std::string>()->default_value("gloo"))
    ("topology", "Comma-separated list, or all: " + comm::topologyHelp(),
     cxxopts::value<std::string>()->default_value("native"))
    ("dtype", "Comma-separated list of " + common::joinList(comm::elementTypeNames()),
     cxxopts::value<std::string>()->default_value("float32"))
    ("b,min-bytes", "Smallest message (bytes; K, M, G suffixes)", cxxopts::value<std::string>()->default_value("4K"))
    ("e,max-bytes", "Largest message", cxxopts::value<std::string>()->default_value("16M"))
    ("f,factor", "Size multiplier between rows", cxxopts::value<double>()->default_value("2"))
    ("counts", "Explicit element counts instead of the byte sweep, e.g. 0,1,13,1000003",
     cxxopts::value<std::string>())
    ("warmup-iters", "Untimed all-reduces per size", cxxopts::value<int>()->default_value("5"))
    ("iters", "Timed all-reduces per size", cxxopts::value<int>()->default_value("20"))
    ("timing", "each: every all-reduce timed alone on fresh data, the mean over iterations, the slowest rank's; "
     "loop: nccl-tests' way, the iterations back to back as one interval, averaged over ranks",
     cxxopts::value<std::string>()->default_value("each"))
    ("check", "Verify every element of one extra all-reduce per size against the exact sum")
    ("threads", "Intra-op threads per rank (at most the cores this process may run on)",
     cxxopts::value<int>()->default_value("1"))
    ("segment-bytes", "Pipeline segment of the point-to-point topologies (K, M suffixes; 0: whole chunks; "
     "auto: each topology's default, within one host 1M for tree, star, binary-tree-star, hierarchical, whole "
     "chunks for ring, clique; across hosts, for every one, about 1 ms of the slowest link or less, so that the "
     "pieces in flight fit its 10 ms queue, where the emulated cluster's cluster.json gives its rate (16K-32K at "
     "200 Mbit/s, 64K-128K at 1 Gbit/s), else 128K)", cxxopts::value<std::string>()->default_value("auto"));
  options.add_options("Output")
    ("csv", "Write the rows as CSV to FILE", cxxopts::value<std::string>())
    ("json", "Write the rows as JSON to FILE", cxxopts::value<std::string>())
    ("traffic", "Write traffic.csv (src,dst,bytes,kind) to FILE", cxxopts::value<std::string>())
    ("timeline", "Write traffic_timeline.csv (t_start_s,src,dst,bytes) to FILE", cxxopts::value<std::string>())
    ("h,help", "Show this help");
  // clang-format on
  addRankOptions(options, comm::BackendOptions{});
  const ParsedOptions parsed = parseOptions(options, "allreduce", args);
  AllreduceOptions o;
  if (parsed.help) {
    o.help = true;
    o.helpText = parsed.helpText;
    return o;
  }
  const cxxopts::ParseResult& p = parsed.result;
  AllreduceSettings& s = o.settings;
  try {
    const comm::Backend backend = comm::backendNames().parse(p["backend"].as<std::string>());
    comm::checkBackendAvailable(backend);
    const std::string topology = p["topology"].as<std::string>();
    s.topologies.clear();
    if (topology == "all") {  // every topology this backend runs
      for (const comm::Topology& t : comm::Topology::all())
        if (t.native() || comm::backendRow(backend).pointToPoint) s.topologies.push_back(t);
    } else {
      for (const std::string& t : listOf("--topology", topology, "ring,tree")) {
        s.topologies.push_back(comm::Topology::parse(t));
        comm::checkBackendRunsTopology(backend, "--topology " + t, !s.topologies.back().native());
      }
    }
    s.dtypes.clear();
    for (const std::string& d : listOf("--dtype", p["dtype"].as<std::string>(), "float32,bfloat16"))
      s.dtypes.push_back(comm::parseElementType(d));
    s.minBytes = parseBytes("--min-bytes", p["min-bytes"].as<std::string>());
    s.maxBytes = parseBytes("--max-bytes", p["max-bytes"].as<std::string>());
    s.factor = p["factor"].as<double>();
    if (s.factor <= 1.0) throw UsageError("--factor must be greater than 1");
    // A sweep starting at 0 bytes would multiply 0 forever.
    if (s.minBytes < 1)
      throw UsageError("--min-bytes must be at least 1 byte, got '" + p["min-bytes"].as<std::string>() +
                       "'; for an all-reduce of no elements use --counts 0");
    if (s.maxBytes < s.minBytes) throw UsageError("--max-bytes must be at least --min-bytes");
    if (p.count("counts"))
      for (const std::string& c : listOf("--counts", p["counts"].as<std::string>(), "0,1,13,1000003"))
        s.counts.push_back(parseBytes("--counts", c));
    else
      sweepCounts(s, 1);  // refuses a sweep of too many sizes now, not after the rendezvous
    // The largest buffer of the sweep, on one rank: beyond the machine's memory it cannot be made.
    int64_t largest = s.counts.empty() ? s.maxBytes : 0;
    for (const int64_t count : s.counts)
      for (const comm::ElementType type : s.dtypes)
        largest = std::max<int64_t>(largest, count * static_cast<int64_t>(comm::bytesPerElement(type)));
    if (const std::optional<double> memory = common::physicalMemoryBytes(); memory && largest > *memory)
      throw UsageError(std::string(s.counts.empty() ? "--max-bytes" : "--counts") + ": the largest all-reduce takes " +
                       common::gibText(static_cast<double>(largest)) + " per rank, more than this machine's " +
                       common::gibText(*memory) + "; ask for smaller sizes");
    s.warmupIters = p["warmup-iters"].as<int>();
    s.iters = p["iters"].as<int>();
    if (s.warmupIters < 0 || s.iters < 1) throw UsageError("--iters must be at least 1, --warmup-iters at least 0");
    const std::string timing = p["timing"].as<std::string>();
    if (timing != "each" && timing != "loop") throw UsageError("--timing is each or loop, got '" + timing + "'");
    s.loopTiming = timing == "loop";
    s.check = p.count("check") > 0;
    s.threads = p["threads"].as<int>();
    const int cores = trainer::availableCores();
    if (s.threads < 1 || s.threads > cores)
      throw UsageError("--threads must be in [1, " + std::to_string(cores) +
                       "] (the cores this process may run on), got " + std::to_string(s.threads));
    if (const std::string segment = p["segment-bytes"].as<std::string>(); segment != "auto")
      s.segmentBytes = parseBytes("--segment-bytes", segment);
    if (p.count("csv")) s.csvPath = p["csv"].as<std::string>();
    if (p.count("json")) s.jsonPath = p["json"].as<std::string>();
    if (p.count("traffic")) s.trafficPath = p["traffic"].as<std::string>();
    if (p.count("timeline")) s.timelinePath = p["timeline"].as<std::string>();
    o.ranks = readRankOptions(p, env, backend);
  } catch (const UsageError&) {
    throw;
  } catch (const cxxopts::exceptions::exception& e) {
    throwUsage("allreduce", e.what());
  } catch (const std::invalid_argument& e) {  // an unsupported element type
    throw UsageError(e.what());
  }
  return o;
}

}  // namespace dtbench::experiments
