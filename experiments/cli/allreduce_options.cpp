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
#include "experiments/cli/option_rows.h"
#include "trainer/thread_share.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <sstream>
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

namespace {

using AllreduceRow = OptionRow<AllreduceOptions>;

// "4K" for 4096, "16M", "1G": a byte count as --help shows it, exact.
std::string bytesText(int64_t bytes) {
  const char* suffixes[] = {"", "K", "M", "G"};
  int k = 0;
  while (k < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++k;
  }
  return std::to_string(bytes) + suffixes[k];
}

const common::NamedValues<bool>& timingNames() {
  static const common::NamedValues<bool> names("--timing", {{false, "each"}, {true, "loop"}});
  return names;
}



int intAtLeast(const std::string& flag, const cxxopts::OptionValue& value, int min) {
  const long long v = atLeast(flag, value.as<long long>(), min);
  if (v > 1'000'000'000) throw UsageError(flag + " must be at most 1000000000, got " + std::to_string(v));
  return static_cast<int>(v);
}

// The flags of `dtbench allreduce` besides the rank flags (rank_options.h), in --help's order; the
// defaults are AllreduceSettings' and comm::BackendOptions' member initializers.
const std::vector<AllreduceRow>& allreduceRows() {
  static const std::vector<AllreduceRow> rows{
      {"backend", "Benchmark", comm::backendNames().joined(", ", " or "), ValueKind::kText,
       [](const AllreduceOptions& o) { return std::string(comm::name(o.ranks.connection.backend)); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.ranks.connection.backend = comm::backendNames().parse(optionText(v));
       }},
      {"topology", "Benchmark", "Comma-separated list, or all: " + comm::topologyHelp(), ValueKind::kText,
       [](const AllreduceOptions& o) {
         std::vector<std::string> names;
         for (const comm::Topology& t : o.settings.topologies) names.push_back(t.name());
         return common::joinList(names, ",");
       },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.topologies.clear();
         o.everyTopology = optionText(v) == "all";  // the ones the backend runs, once it is known
         if (o.everyTopology) return;
         for (const std::string& t : listOf(flag, optionText(v), "ring,tree")) o.settings.topologies.push_back(comm::Topology::parse(t));
       }},
      {"dtype", "Benchmark", "Comma-separated list of " + common::joinList(comm::elementTypeNames()), ValueKind::kText,
       [](const AllreduceOptions& o) {
         std::vector<std::string> names;
         for (const comm::ElementType t : o.settings.dtypes) names.push_back(comm::name(t));
         return common::joinList(names, ",");
       },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.dtypes.clear();
         for (const std::string& d : listOf(flag, optionText(v), "float32,bfloat16"))
           o.settings.dtypes.push_back(comm::parseElementType(d));
       }},
      {"b,min-bytes", "Benchmark", "Smallest message (bytes; K, M, G suffixes)", ValueKind::kText,
       [](const AllreduceOptions& o) { return bytesText(o.settings.minBytes); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.minBytes = parseBytes(flag, optionText(v));
         // A sweep starting at 0 bytes would multiply 0 forever.
         if (o.settings.minBytes < 1)
           throw UsageError(flag + " must be at least 1 byte, got '" + optionText(v) +
                            "'; for an all-reduce of no elements use --counts 0");
       }},
      {"e,max-bytes", "Benchmark", "Largest message", ValueKind::kText,
       [](const AllreduceOptions& o) { return bytesText(o.settings.maxBytes); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.maxBytes = parseBytes(flag, optionText(v));
       }},
      {"f,factor", "Benchmark", "Size multiplier between rows", ValueKind::kNumber,
       [](const AllreduceOptions& o) { return numberText(o.settings.factor); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.factor = v.as<double>();
         if (o.settings.factor <= 1.0) throw UsageError(flag + " must be greater than 1");
       }},
      {"counts", "Benchmark", "Explicit element counts instead of the byte sweep, e.g. 0,1,13,1000003",
       ValueKind::kText, nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         for (const std::string& c : listOf(flag, optionText(v), "0,1,13,1000003"))
           o.settings.counts.push_back(parseBytes(flag, c));
       }},
      {"warmup-iters", "Benchmark", "Untimed all-reduces per size", ValueKind::kInteger,
       [](const AllreduceOptions& o) { return std::to_string(o.settings.warmupIters); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.warmupIters = intAtLeast(flag, v, 0);
       }},
      {"iters", "Benchmark", "Timed all-reduces per size", ValueKind::kInteger,
       [](const AllreduceOptions& o) { return std::to_string(o.settings.iters); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.settings.iters = intAtLeast(flag, v, 1);
       }},
      {"timing", "Benchmark",
       "each: every all-reduce timed alone on fresh data, the mean over iterations, the slowest rank's; "
       "loop: nccl-tests' way, the iterations back to back as one interval, averaged over ranks",
       ValueKind::kText, [](const AllreduceOptions& o) { return std::string(timingNames().name(o.settings.loopTiming)); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.settings.loopTiming = timingNames().parse(optionText(v));
       }},
      {"check", "Benchmark", "Verify every element of one extra all-reduce per size against the exact sum",
       ValueKind::kSwitch, nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue&, const std::string&) { o.settings.check = true; }},
      {"threads", "Benchmark", "Intra-op threads per rank (at most the cores this process may run on)",
       ValueKind::kInteger, [](const AllreduceOptions& o) { return std::to_string(o.settings.threads); },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long threads = v.as<long long>();
         const int cores = trainer::availableCores();
         if (threads < 1 || threads > cores)
           throw UsageError(flag + " must be in [1, " + std::to_string(cores) +
                            "] (the cores this process may run on), got " + std::to_string(threads));
         o.settings.threads = static_cast<int>(threads);
       }},
      {"segment-bytes", "Benchmark",
       "Pipeline segment of the point-to-point topologies (K, M suffixes; 0: whole chunks; auto: each topology's "
       "default, within one host 1M for tree, star, binary-tree-star, hierarchical, whole chunks for ring, clique; "
       "across hosts, for every one, about 1 ms of the slowest link or less, so that the pieces in flight fit its "
       "10 ms queue, where the emulated cluster's cluster.json gives its rate (16K-32K at 200 Mbit/s, 64K-128K at "
       "1 Gbit/s), else 128K)",
       ValueKind::kText,
       [](const AllreduceOptions& o) {
         return o.settings.segmentBytes ? bytesText(*o.settings.segmentBytes) : std::string("auto");
       },
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         if (optionText(v) == "auto")
           o.settings.segmentBytes.reset();
         else
           o.settings.segmentBytes = parseBytes(flag, optionText(v));
       }},
      {"csv", "Output", "Write the rows as CSV to FILE", ValueKind::kText, nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.settings.csvPath = optionText(v); }},
      {"json", "Output", "Write the rows as JSON to FILE", ValueKind::kText, nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.settings.jsonPath = optionText(v); }},
      {"traffic", "Output", "Write traffic.csv (src,dst,bytes,kind) to FILE", ValueKind::kText, nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.settings.trafficPath = optionText(v);
       }},
      {"timeline", "Output", "Write traffic_timeline.csv (t_start_s,src,dst,bytes) to FILE", ValueKind::kText,
       nullptr,
       [](AllreduceOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.settings.timelinePath = optionText(v);
       }},
  };
  return rows;
}

// What the rows cannot check alone: the topologies the backend runs, the sweep's bounds and size.
void checkTogether(AllreduceOptions& o) {
  AllreduceSettings& s = o.settings;
  const comm::Backend backend = o.ranks.connection.backend;
  comm::checkBackendAvailable(backend);
  if (o.everyTopology) {  // every topology this backend runs
    for (const comm::Topology& t : comm::Topology::all())
      if (t.native() || comm::backendRow(backend).pointToPoint) s.topologies.push_back(t);
  } else {
    for (const comm::Topology& t : s.topologies)
      comm::checkBackendRunsTopology(backend, "--topology " + t.name(), !t.native());
  }
  if (s.maxBytes < s.minBytes) throw UsageError("--max-bytes must be at least --min-bytes");
  if (s.counts.empty()) sweepCounts(s, 1);  // refuses a sweep of too many sizes now, not after the rendezvous
  // The largest buffer of the sweep, on one rank: beyond the machine's memory it cannot be made.
  int64_t largest = s.counts.empty() ? s.maxBytes : 0;
  for (const int64_t count : s.counts)
    for (const comm::ElementType type : s.dtypes)
      largest = std::max<int64_t>(largest, count * static_cast<int64_t>(comm::bytesPerElement(type)));
  if (const std::optional<double> memory = common::physicalMemoryBytes(); memory && largest > *memory)
    throw UsageError(std::string(s.counts.empty() ? "--max-bytes" : "--counts") + ": the largest all-reduce takes " +
                     common::gibText(static_cast<double>(largest)) + " per rank, more than this machine's " +
                     common::gibText(*memory) + "; ask for smaller sizes");
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
  addOptionRows(options, allreduceRows());
  options.add_options("Output")("h,help", "Show this help");
  addRankOptions(options, comm::BackendOptions{});
  const ParsedOptions parsed = parseOptions(options, "allreduce", args);
  AllreduceOptions o;
  if (parsed.help) {
    o.help = true;
    o.helpText = parsed.helpText;
    return o;
  }
  const cxxopts::ParseResult& p = parsed.result;
  try {
    applyOptionRows(p, allreduceRows(), o);
    checkTogether(o);
    o.ranks = readRankOptions(p, env, o.ranks.connection.backend);
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
