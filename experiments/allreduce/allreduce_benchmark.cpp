#include "experiments/allreduce/allreduce_benchmark.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "comm/allgather_values.h"
#include "comm/backends/backend.h"
#include "comm/failure/peer_table.h"
#include "comm/impairment/impairment.h"
#include "comm/tensor_element_type.h"
#include "comm/topology/hosts.h"
#include "comm/topology/link_bound.h"
#include "comm/topology/ring.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic/message_log.h"
#include "comm/traffic/traffic_exchange.h"
#include "comm/traffic/traffic_recorder.h"
#include "comm/work.h"
#include "common/cluster_file.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/allreduce/iteration_spread.h"

namespace dtbench::experiments {
namespace {

struct Row {
  std::string topology;
  std::string dtype;
  int64_t bytes = 0;
  int64_t count = 0;
  double timeUs = 0;
  double algbw = 0;                     // GB/s
  double busbw = 0;                     // GB/s
  int64_t wrong = -1;                   // -1: not checked
  std::optional<double> boundBusbw;     // GB/s; none off the cluster, on one host, or for no bytes
  std::optional<double> ofBound;        // busbw / boundBusbw
  std::optional<int64_t> segmentBytes;  // the executor's pipeline segment (0: whole chunks); none for native
  std::optional<common::SampleSpread> iterations;  // iteration_spread.h, in us; none for --timing loop
};

// The hosts' link rates as the bound needs them: one per host of `hosts`, or none off the cluster
// (emulated hosts included) or when some host's link is not shaped.
struct Links {
  common::ClusterLinks cluster;
  std::optional<std::vector<double>> rates;
};

Links linksOf(comm::Communicator& c, int ranksPerHost, const std::vector<std::string>& hostnames,
              const comm::HostLayout& hosts) {
  Links links;
  if (ranksPerHost > 0) return links;  // emulated hosts have no link of their own
  links.cluster = common::clusterLinksFromVariable(std::getenv(common::kClusterVariable), hostnames,
                                                   c.rank() == 0 ? &std::cerr : nullptr);
  if (!links.cluster.rates()) return links;
  std::vector<double> rates;
  for (size_t h = 0; h < hosts.hosts.size(); ++h)
    for (const common::HostLink& link : links.cluster.hosts)
      if (link.host == hostnames[static_cast<size_t>(hosts.leaderOf(static_cast<int>(h)))])
        rates.push_back(*link.linkRateBps);
  if (rates.size() == hosts.hosts.size()) links.rates = rates;
  return links;
}

// The slowest of the hosts' links, which sets the pipeline segment across hosts
// (comm::crossHostSegmentBytes), or none (see linksOf). Collective: ranks that read different rates
// (another DTBENCH_CLUSTER) would cut the same tensor differently, so that is refused on every rank.
std::optional<double> agreedSlowestLink(comm::Communicator& c, const Links& links) {
  std::optional<double> slowest;
  if (links.rates) slowest = *std::min_element(links.rates->begin(), links.rates->end());
  std::vector<std::optional<double>> ofRank;
  for (double rate : comm::allgatherDoubles(c, slowest.value_or(0)))
    ofRank.push_back(rate > 0 ? std::optional<double>(rate) : std::nullopt);
  if (const std::string message = common::describeLinkRateDisagreement(ofRank); !message.empty())
    throw common::UsageError(message);
  return slowest;
}

void boundRow(Row& row, comm::Backend backend, const comm::HostLayout& hosts, const Links& links,
              int64_t elementBytes) {
  if (!links.rates || hosts.hosts.size() < 2) return;
  const comm::LinkBound bound =
      comm::topologyLinkBound(row.topology, backend, hosts, row.count, elementBytes, *links.rates);
  if (bound.busbwBytesPerSecond <= 0) return;
  row.boundBusbw = bound.busbwBytesPerSecond / 1e9;
  row.ofBound = row.busbw / *row.boundBusbw;
}

at::Tensor checkInput(int64_t count, int rank, at::ScalarType type) {
  return ((at::arange(count, at::kLong) % 7 + 1) * (rank + 1)).to(type);
}

at::Tensor checkExpected(int64_t count, int world) {
  return ((at::arange(count, at::kLong) % 7 + 1) * (world * (world + 1) / 2)).to(at::kFloat);
}

at::Tensor overRanks(comm::Communicator& c, double value) {
  at::Tensor all = at::empty({c.size()}, at::kDouble);
  c.allgather(all, at::full({1}, value, at::kDouble))->wait();
  return all;
}

Row measure(comm::Communicator& c, comm::TopologyAllreduce& algorithm, const AllreduceSettings& s, at::ScalarType type,
            int64_t count) {
  Row row;
  row.topology = algorithm.topology().name();
  row.dtype = comm::name(comm::elementTypeOf(type));
  row.count = count;
  row.bytes = count * static_cast<int64_t>(c10::elementSize(type));
  // Where the backend communicates without a copy: the CPU, or this rank's GPU for nccl.
  const at::TensorOptions on = at::TensorOptions().dtype(type).device(c.device());
  at::Tensor data = at::ones({count}, on);
  // The all-reduced buffer is the payload (docs/wire.md, "Message log"); barrier and gathers stay control.
  const auto payload = [&](const at::Tensor& t) {
    const comm::MessageCategoryScope category(comm::MessageCategory::kGradients);
    algorithm.allreduce(t);
  };
  for (int i = 0; i < s.warmupIters; ++i) payload(data.fill_(1));
  double seconds = 0;
  if (s.loopTiming) {
    data.zero_();  // sums of zeros stay zero over any number of iterations
    c.barrier()->wait();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < s.iters; ++i) payload(data);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    row.timeUs = overRanks(c, seconds / s.iters * 1e6).mean().item<double>();
  } else {
    c.barrier()->wait();
    at::Tensor iterationUs = at::empty({s.iters}, at::kDouble);
    for (int i = 0; i < s.iters; ++i) {
      data.fill_(1);  // keeps values finite; the fill is outside the timed interval
      const auto start = std::chrono::steady_clock::now();
      payload(data);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      seconds += took;
      iterationUs[i] = took * 1e6;
    }
    row.timeUs = overRanks(c, seconds / s.iters * 1e6).max().item<double>();
    if (s.iters > 0) {
      at::Tensor all = at::empty({static_cast<int64_t>(c.size()) * s.iters}, at::kDouble);
      c.allgather(all, iterationUs)->wait();
      const double* first = all.data_ptr<double>();
      row.iterations = iterationSpread(std::vector<double>(first, first + all.numel()), c.size(), s.iters);
    }
  }
  row.algbw = row.timeUs > 0 ? static_cast<double>(row.bytes) / (row.timeUs * 1e-6) / 1e9 : 0;
  row.busbw = comm::ringBusBandwidth(row.algbw, c.size());
  if (s.check) {
    at::Tensor t = checkInput(count, c.rank(), type).to(c.device());
    payload(t);
    const int64_t wrong = t.to(at::kCPU, at::kFloat).ne(checkExpected(count, c.size())).sum().item<int64_t>();
    row.wrong = 0;
    for (const auto& w : comm::allgatherInt64(c, {wrong})) row.wrong += w[0];
  }
  return row;
}

void printRow(const Row& r) {
  char wrong[32] = "N/A";
  if (r.wrong >= 0) std::snprintf(wrong, sizeof wrong, "%lld", static_cast<long long>(r.wrong));
  char bound[32] = "-", ofBound[32] = "-";
  if (r.boundBusbw) std::snprintf(bound, sizeof bound, "%.3f", *r.boundBusbw);
  if (r.ofBound) std::snprintf(ofBound, sizeof ofBound, "%.3f", *r.ofBound);
  char minUs[32] = "-", maxUs[32] = "-", p99Us[32] = "-", cv[32] = "-";
  std::string noisy = "-";
  if (r.iterations) {
    std::snprintf(minUs, sizeof minUs, "%.1f", r.iterations->min);
    std::snprintf(maxUs, sizeof maxUs, "%.1f", r.iterations->max);
    std::snprintf(p99Us, sizeof p99Us, "%.1f", r.iterations->p99);
    if (r.iterations->cvPct) std::snprintf(cv, sizeof cv, "%.2f", *r.iterations->cvPct);
    noisy = r.iterations->noisy() ? "noisy" : "";
  }
  std::printf("%12lld %12lld %9s %12.1f %9.3f %9.3f %9s %8s %7s %10s %10s %10s %7s %s\n", static_cast<long long>(r.bytes),
              static_cast<long long>(r.count), r.dtype.c_str(), r.timeUs, r.algbw, r.busbw, bound, ofBound, wrong, minUs,
              maxUs, p99Us, cv, noisy.c_str());
  std::fflush(stdout);
}

// The CSV's last five cells: iter_min_us, iter_max_us, iter_p99_us, iter_cv_pct, noisy ("no" or the
// reasons); all empty under --timing loop, the CV empty for a single iteration.
std::string iterationCells(const std::optional<common::SampleSpread>& spread) {
  if (!spread) return ",,,,";
  std::ostringstream out;
  out << spread->min << ',' << spread->max << ',' << spread->p99 << ',';
  if (spread->cvPct) out << *spread->cvPct;
  out << ',' << spread->noisyText();
  return out.str();
}

// `nodes`: distinct real host names of the ranks.
void writeOutputs(const AllreduceSettings& s, const std::vector<Row>& rows, int world, const std::string& backend,
                  std::optional<double> linkRate, int nodes) {
  const nlohmann::json rate = linkRate ? common::rateJson(*linkRate) : nlohmann::json();
  const auto optional = [](std::optional<double> value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
  if (!s.csvPath.empty()) {
    std::ofstream csv(s.csvPath);
    csv << "backend,topology,world_size,size,count,type,time_us,algbw_gbps,busbw_gbps,wrong,link_rate_bps,"
           "bound_busbw_gbps,of_bound,nodes,segment_bytes,timing,iter_min_us,iter_max_us,iter_p99_us,iter_cv_pct,noisy\n";
    const auto cell = [](std::optional<double> value) {
      std::ostringstream out;
      if (value) out << *value;
      return out.str();
    };
    for (const Row& r : rows)
      csv << backend << ',' << r.topology << ',' << world << ',' << r.bytes << ',' << r.count << ',' << r.dtype << ','
          << r.timeUs << ',' << r.algbw << ',' << r.busbw << ',' << (r.wrong >= 0 ? std::to_string(r.wrong) : "") << ','
          << (linkRate ? rate.dump() : "") << ',' << cell(r.boundBusbw) << ',' << cell(r.ofBound) << ',' << nodes << ','
          << (r.segmentBytes ? std::to_string(*r.segmentBytes) : "") << ',' << (s.loopTiming ? "loop" : "each") << ','
          << iterationCells(r.iterations) << '\n';
    if (!csv) throw std::runtime_error("cannot write --csv " + s.csvPath);
  }
  if (!s.jsonPath.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows)
      out.push_back({{"backend", backend},
                     {"topology", r.topology},
                     {"world_size", world},
                     {"size", r.bytes},
                     {"count", r.count},
                     {"type", r.dtype},
                     {"time_us", r.timeUs},
                     {"algbw_gbps", r.algbw},
                     {"busbw_gbps", r.busbw},
                     {"wrong", r.wrong >= 0 ? nlohmann::json(r.wrong) : nlohmann::json()},
                     {"link_rate_bps", rate},
                     {"bound_busbw_gbps", optional(r.boundBusbw)},
                     {"of_bound", optional(r.ofBound)},
                     {"nodes", nodes},
                     {"segment_bytes", r.segmentBytes ? nlohmann::json(*r.segmentBytes) : nlohmann::json()},
                     {"timing", s.loopTiming ? "loop" : "each"},
                     {"iter_min_us", r.iterations ? nlohmann::json(r.iterations->min) : nlohmann::json()},
                     {"iter_max_us", r.iterations ? nlohmann::json(r.iterations->max) : nlohmann::json()},
                     {"iter_p99_us", r.iterations ? nlohmann::json(r.iterations->p99) : nlohmann::json()},
                     {"iter_cv_pct", r.iterations ? optional(r.iterations->cvPct) : nlohmann::json()},
                     {"noisy", r.iterations ? nlohmann::json(r.iterations->noisyText()) : nlohmann::json()}});
    std::ofstream json(s.jsonPath);
    json << out.dump(2) << '\n';
    if (!json) throw std::runtime_error("cannot write --json " + s.jsonPath);
  }
}

// Gathers every rank's traffic to rank 0, which writes --traffic and --timeline and prints the matrix.
void reportTraffic(comm::Communicator& c, const comm::TrafficRecorder& recorder, const AllreduceSettings& s) {
  const comm::MergedTraffic merged = comm::gatherTraffic(c, recorder);
  if (c.rank() != 0) return;
  const int n = c.size();
  std::vector<int64_t> sent(static_cast<size_t>(n) * static_cast<size_t>(n), 0);
  for (const comm::TrafficRow& row : merged.traffic)
    sent[static_cast<size_t>(row.src) * static_cast<size_t>(n) + static_cast<size_t>(row.dst)] += row.bytes;
  std::printf("# traffic matrix, bytes sent (rows: src, columns: dst; counted + modelled):\n#%6s", "src");
  for (int d = 0; d < n; ++d) std::printf(" %14d", d);
  std::printf("\n");
  for (int src = 0; src < n; ++src) {
    std::printf("#%6d", src);
    for (int d = 0; d < n; ++d)
      std::printf(" %14lld", static_cast<long long>(sent[static_cast<size_t>(src) * static_cast<size_t>(n) + d]));
    std::printf("\n");
  }
  if (!s.trafficPath.empty()) {
    std::ofstream out(s.trafficPath);
    comm::writeTrafficCsv(out, merged.traffic);
    if (!out) throw std::runtime_error("cannot write --traffic " + s.trafficPath);
  }
  if (!s.timelinePath.empty()) {
    std::ofstream out(s.timelinePath);
    comm::writeTimelineCsv(out, merged.timeline);
    if (!out) throw std::runtime_error("cannot write --timeline " + s.timelinePath);
  }
}

}  // namespace

std::vector<int64_t> sweepCounts(const AllreduceSettings& s, int64_t elementBytes) {
  if (!s.counts.empty()) return s.counts;
  if (s.minBytes < 1 || !(s.factor > 1) || !std::isfinite(s.factor))
    throw common::UsageError("a byte sweep needs --min-bytes >= 1 and a finite --factor > 1, got --min-bytes " +
                             std::to_string(s.minBytes) + " and --factor " + std::to_string(s.factor));
  const double sizes =
      std::log(static_cast<double>(std::max(s.maxBytes, s.minBytes)) / static_cast<double>(s.minBytes)) /
          std::log(s.factor) +
      1;
  if (sizes > kMaxSweepSizes)
    throw common::UsageError("--min-bytes " + std::to_string(s.minBytes) + " to --max-bytes " +
                             std::to_string(s.maxBytes) + " by --factor " + std::to_string(s.factor) + " is " +
                             std::to_string(static_cast<long long>(std::min(sizes, 1e18))) + " sizes, more than " +
                             std::to_string(kMaxSweepSizes) + "; raise --factor or narrow the range");
  std::vector<int64_t> counts;
  for (double bytes = static_cast<double>(s.minBytes); bytes <= static_cast<double>(s.maxBytes) * 1.0000001;
       bytes *= s.factor) {
    const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(bytes) / elementBytes);
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

void checkOutputsWritable(const AllreduceSettings& s) {
  const std::pair<const char*, const std::string*> outputs[] = {{"--csv", &s.csvPath},
                                                                {"--json", &s.jsonPath},
                                                                {"--traffic", &s.trafficPath},
                                                                {"--timeline", &s.timelinePath}};
  for (const auto& [flag, path] : outputs) {
    if (path->empty()) continue;
    // Opened for appending, so that an existing file keeps its contents until the rows replace
    // them; a file made only to try is removed again.
    const bool existed = access(path->c_str(), F_OK) == 0;
    const int fd = open(path->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw common::UsageError(std::string(flag) + " " + *path + " cannot be written (" + std::strerror(errno) +
                               "); give a file in a directory that exists and is writable");
    close(fd);
    if (!existed) unlink(path->c_str());
  }
}

int64_t runAllreduceBenchmark(comm::Communicator& c, int ranksPerHost, const AllreduceSettings& s, double timeoutS) {
  // The real host names, also under --ranks-per-host: the CSV's nodes counts them.
  const std::vector<std::string> hostnames = comm::allgatherStrings(c, comm::thisHostName());
  const comm::HostLayout hosts =
      ranksPerHost > 0 ? comm::hostsFromRanksPerHost(c.size(), ranksPerHost) : comm::hostsFromNames(hostnames);
  const int nodes = static_cast<int>(comm::hostsFromNames(hostnames).hosts.size());
  const Links links = linksOf(c, ranksPerHost, hostnames, hosts);
  const std::optional<double> slowestLink = agreedSlowestLink(c, links);
  comm::TrafficRecorder recorder(c.rank(), c.size());
  const bool root = c.rank() == 0;
  const std::string backend = comm::name(c.backend());
  std::vector<std::string> dtypeNames;
  for (comm::ElementType t : s.dtypes) dtypeNames.push_back(comm::name(t));
  const std::string dtypes = common::joinList(dtypeNames, ",");
  if (root)
    std::printf(
        "# dtbench allreduce: backend %s, %d ranks on %zu host(s)%s, %s, %d warm-up + %d timed iterations, "
        "%d intra-op thread(s) per rank, timeout %.1f s, point-to-point segments: %s\n",
        backend.c_str(), c.size(), hosts.hosts.size(), ranksPerHost > 0 ? " (emulated)" : "", dtypes.c_str(),
        s.warmupIters, s.iters, s.threads, timeoutS,
        s.segmentBytes ? (std::to_string(*s.segmentBytes) + " bytes").c_str() : "each topology's default");
  if (root && links.cluster.onCluster()) {
    std::vector<std::string> rates;
    for (const common::HostLink& link : links.cluster.hosts)
      rates.push_back(link.host + " " + (link.linkRateBps ? common::rateText(*link.linkRateBps) : "not shaped"));
    std::printf("# cluster %s: links %s; %s\n", links.cluster.file->c_str(), common::joinList(rates).c_str(),
                !links.rates             ? "a link is not shaped: no bound"
                : hosts.hosts.size() < 2 ? "every rank on one host: no link is crossed, no bound"
                                         : "bound = the busbw the busiest link allows (comm/topology/link_bound.h)");
  }
  std::vector<Row> rows;
  for (comm::ElementType elementType : s.dtypes) {
    const std::string dtype = comm::name(elementType);
    const at::ScalarType type = comm::scalarType(elementType);
    for (const comm::Topology& topology : s.topologies) {
      if (topology.native() && !comm::nativeAllreduceSupports(c.backend(), elementType)) {
        if (s.topologies.size() == 1 && s.dtypes.size() == 1)
          throw common::UsageError(backend + "'s own all-reduce does not take " + dtype +
                                   "; choose a point-to-point --topology (ring, tree, ...)");
        if (root)
          std::printf("# topology native, %s: skipped (%s's own all-reduce does not take it)\n", dtype.c_str(),
                      backend.c_str());
        continue;
      }
      comm::TopologyAllreduce algorithm(c, topology, hosts, recorder, comm::Impairment{},
                                        s.segmentBytes.value_or(topology.defaultSegmentBytes(hosts, slowestLink)));
      if (root) {
        if (algorithm.schedule())
          std::printf("# topology %s, %s, segments of %lld bytes (0: whole chunks)\n", topology.name().c_str(),
                      dtype.c_str(), static_cast<long long>(algorithm.segmentBytes()));
        else
          std::printf("# topology %s, %s\n", topology.name().c_str(), dtype.c_str());
        std::printf("%12s %12s %9s %12s %9s %9s %9s %8s %7s %10s %10s %10s %7s\n", "size", "count", "type", "time_us",
                    "algbw", "busbw", "bound", "of_bound", "#wrong", "min", "max", "p99", "cv");
        std::printf("%12s %12s %9s %12s %9s %9s %9s %8s %7s %10s %10s %10s %7s\n", "(B)", "(elements)", "", "(us)",
                    "(GB/s)", "(GB/s)", "(GB/s)", "", "", "(us)", "(us)", "(us)", "(%)");
        std::fflush(stdout);
      }
      for (int64_t count : sweepCounts(s, comm::bytesPerElement(elementType))) {
        rows.push_back(measure(c, algorithm, s, type, count));
        if (algorithm.schedule()) rows.back().segmentBytes = algorithm.segmentBytes();
        boundRow(rows.back(), c.backend(), hosts, links, comm::bytesPerElement(elementType));
        if (root) printRow(rows.back());
      }
    }
  }
  reportTraffic(c, recorder, s);
  int64_t wrong = 0;
  for (const Row& r : rows) wrong += std::max<int64_t>(0, r.wrong);
  if (root) {
    writeOutputs(s, rows, c.size(), backend, links.cluster.slowest(), nodes);
    if (s.check)
      std::printf("# check: %lld wrong element(s) over all sizes and topologies\n", static_cast<long long>(wrong));
  }
  c.barrier()->wait();
  return wrong;
}

}  // namespace dtbench::experiments
