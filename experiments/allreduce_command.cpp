// dtbench allreduce: the nccl-tests-style all-reduce benchmark over every backend x topology.
// Column definitions are in the --help text (allreduce_options.cpp), once.

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "comm/allgather_values.h"
#include "comm/backend.h"
#include "comm/element_type.h"
#include "comm/peer_table.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic_exchange.h"
#include "experiments/allreduce_options.h"
#include "experiments/commands.h"
#include "experiments/rank_options.h"
#include "trainer/config.h"

namespace dtbench::experiments {
namespace {

struct Row {
  std::string topology;
  std::string dtype;
  int64_t bytes = 0;
  int64_t count = 0;
  double timeUs = 0;
  double algbw = 0;  // GB/s
  double busbw = 0;  // GB/s
  int64_t wrong = -1;  // -1: not checked
};

// Rank r's element i is (i mod 7 + 1)(r + 1): every sum is an integer below 256 for up to 8 ranks,
// exact in float32, float16 and bfloat16, so --check compares for equality.
at::Tensor checkInput(int64_t count, int rank, at::ScalarType type) {
  return ((at::arange(count, at::kLong) % 7 + 1) * (rank + 1)).to(type);
}

at::Tensor checkExpected(int64_t count, int world) {
  return ((at::arange(count, at::kLong) % 7 + 1) * (world * (world + 1) / 2)).to(at::kFloat);
}

double maxOverRanks(comm::Communicator& c, double value) {
  at::Tensor all = at::empty({c.size()}, at::kFloat);
  c.allgather(all, at::full({1}, value, at::kFloat))->wait();
  return all.max().item<double>();
}

Row measure(comm::Communicator& c, comm::TopologyAllreduce& algorithm, const AllreduceOptions& o,
            at::ScalarType type, int64_t count) {
  Row row;
  row.topology = algorithm.topology();
  row.dtype = comm::name(comm::elementTypeOf(type));
  row.count = count;
  row.bytes = count * static_cast<int64_t>(c10::elementSize(type));
  at::Tensor data = at::ones({count}, type);
  for (int i = 0; i < o.warmupIters; ++i) algorithm.allreduce(data.fill_(1));
  c.barrier()->wait();
  double seconds = 0;
  for (int i = 0; i < o.iters; ++i) {
    data.fill_(1);  // keeps values finite; the fill is outside the timed interval
    const auto start = std::chrono::steady_clock::now();
    algorithm.allreduce(data);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  row.timeUs = maxOverRanks(c, seconds / o.iters * 1e6);
  row.algbw = row.timeUs > 0 ? static_cast<double>(row.bytes) / (row.timeUs * 1e-6) / 1e9 : 0;
  row.busbw = row.algbw * 2.0 * (c.size() - 1) / c.size();
  if (o.check) {
    at::Tensor t = checkInput(count, c.rank(), type);
    algorithm.allreduce(t);
    const int64_t wrong = t.to(at::kFloat).ne(checkExpected(count, c.size())).sum().item<int64_t>();
    row.wrong = 0;
    for (const auto& w : comm::allgatherInt64(c, {wrong})) row.wrong += w[0];
  }
  return row;
}

void printRow(const Row& r) {
  char wrong[32] = "N/A";
  if (r.wrong >= 0) std::snprintf(wrong, sizeof wrong, "%lld", static_cast<long long>(r.wrong));
  std::printf("%12lld %12lld %9s %12.1f %9.3f %9.3f %7s\n", static_cast<long long>(r.bytes),
              static_cast<long long>(r.count), r.dtype.c_str(), r.timeUs, r.algbw, r.busbw, wrong);
  std::fflush(stdout);
}

void writeOutputs(const AllreduceOptions& o, const std::vector<Row>& rows, int world, const std::string& backend) {
  if (!o.csvPath.empty()) {
    std::ofstream csv(o.csvPath);
    csv << "backend,topology,world_size,size,count,type,time_us,algbw_gbps,busbw_gbps,wrong\n";
    for (const Row& r : rows)
      csv << backend << ',' << r.topology << ',' << world << ',' << r.bytes << ',' << r.count << ',' << r.dtype << ','
          << r.timeUs << ',' << r.algbw << ',' << r.busbw << ',' << (r.wrong >= 0 ? std::to_string(r.wrong) : "") << '\n';
    if (!csv) throw std::runtime_error("cannot write --csv " + o.csvPath);
  }
  if (!o.jsonPath.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows)
      out.push_back({{"backend", backend}, {"topology", r.topology}, {"world_size", world}, {"size", r.bytes},
                     {"count", r.count}, {"type", r.dtype}, {"time_us", r.timeUs}, {"algbw_gbps", r.algbw},
                     {"busbw_gbps", r.busbw}, {"wrong", r.wrong >= 0 ? nlohmann::json(r.wrong) : nlohmann::json()}});
    std::ofstream json(o.jsonPath);
    json << out.dump(2) << '\n';
    if (!json) throw std::runtime_error("cannot write --json " + o.jsonPath);
  }
}

// Gathers every rank's traffic to rank 0, which writes --traffic and --timeline and prints the matrix.
void reportTraffic(comm::Communicator& c, const comm::TrafficRecorder& recorder, const AllreduceOptions& o) {
  const comm::MergedTraffic merged = comm::gatherTraffic(c, recorder);
  if (c.rank() != 0) return;
  const int n = c.size();
  std::vector<int64_t> sent(static_cast<size_t>(n * n), 0);
  for (const comm::TrafficRow& row : merged.traffic) sent[static_cast<size_t>(row.src * n + row.dst)] += row.bytes;
  std::printf("# traffic matrix, bytes sent (rows: src, columns: dst; counted + modelled):\n#%6s", "src");
  for (int d = 0; d < n; ++d) std::printf(" %14d", d);
  std::printf("\n");
  for (int s = 0; s < n; ++s) {
    std::printf("#%6d", s);
    for (int d = 0; d < n; ++d) std::printf(" %14lld", static_cast<long long>(sent[static_cast<size_t>(s * n + d)]));
    std::printf("\n");
  }
  if (!o.trafficPath.empty()) {
    std::ofstream out(o.trafficPath);
    comm::writeTrafficCsv(out, merged.traffic);
    if (!out) throw std::runtime_error("cannot write --traffic " + o.trafficPath);
  }
  if (!o.timelinePath.empty()) {
    std::ofstream out(o.timelinePath);
    comm::writeTimelineCsv(out, merged.timeline);
    if (!out) throw std::runtime_error("cannot write --timeline " + o.timelinePath);
  }
}

}  // namespace

int runAllreduceCommand(const std::vector<std::string>& args) {
  const comm::Environment env = comm::currentEnvironment();
  const AllreduceOptions o = parseAllreduceOptions(args, env);
  if (o.help) {
    std::printf("%s", o.helpText.c_str());
    return 0;
  }
  const comm::RankInfo who = discoverRankOrExplain(o.ranks, env);
  at::set_num_threads(o.threads);
  const std::unique_ptr<comm::Communicator> c = comm::makeCommunicator(backendOptions(o.backend, o.ranks, who));

  const comm::HostLayout hosts = o.ranks.ranksPerHost > 0
                                     ? comm::hostsFromRanksPerHost(c->size(), o.ranks.ranksPerHost)
                                     : comm::hostsFromNames(comm::allgatherStrings(*c, comm::thisHostName()));
  comm::TrafficRecorder recorder(c->rank(), c->size());
  const bool root = c->rank() == 0;
  std::string dtypes;
  for (const std::string& d : o.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
  if (root)
    std::printf("# dtbench allreduce: backend %s, %d ranks on %zu host(s)%s, %s, %d warm-up + %d timed iterations, "
                "%d intra-op thread(s) per rank, timeout %.1f s, point-to-point segments: %s\n",
                o.backend.c_str(), c->size(), hosts.hosts.size(), o.ranks.ranksPerHost > 0 ? " (emulated)" : "",
                dtypes.c_str(), o.warmupIters, o.iters, o.threads, o.ranks.timeoutS,
                o.segmentBytes ? (std::to_string(*o.segmentBytes) + " bytes").c_str() : "each topology's default");
  std::vector<Row> rows;
  for (const std::string& dtype : o.dtypes) {
    const comm::ElementType elementType = comm::parseElementType(dtype);
    const at::ScalarType type = comm::scalarType(elementType);
    for (const std::string& topology : o.topologies) {
      if (topology == "native" && !comm::nativeAllreduceSupports(o.backend, elementType)) {
        if (o.topologies.size() == 1 && o.dtypes.size() == 1)
          throw trainer::UsageError(o.backend + "'s own all-reduce does not take " + dtype +
                                    "; choose a point-to-point --topology (ring, tree, ...)");
        if (root) std::printf("# topology native, %s: skipped (%s's own all-reduce does not take it)\n", dtype.c_str(),
                              o.backend.c_str());
        continue;
      }
      comm::TopologyAllreduce algorithm(*c, topology, hosts, recorder, comm::Impairment{}, o.segmentBytes);
      if (root) {
        if (algorithm.schedule())
          std::printf("# topology %s, %s, segments of %lld bytes (0: whole chunks)\n", topology.c_str(), dtype.c_str(),
                      static_cast<long long>(algorithm.segmentBytes()));
        else
          std::printf("# topology %s, %s\n", topology.c_str(), dtype.c_str());
        std::printf("%12s %12s %9s %12s %9s %9s %7s\n", "size", "count", "type", "time_us", "algbw", "busbw", "#wrong");
        std::printf("%12s %12s %9s %12s %9s %9s %7s\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "");
        std::fflush(stdout);
      }
      for (int64_t count : sweepCounts(o, comm::bytesPerElement(elementType))) {
        rows.push_back(measure(*c, algorithm, o, type, count));
        if (root) printRow(rows.back());
      }
    }
  }
  reportTraffic(*c, recorder, o);
  int64_t wrong = 0;
  for (const Row& r : rows) wrong += std::max<int64_t>(0, r.wrong);
  if (root) {
    writeOutputs(o, rows, c->size(), o.backend);
    if (o.check) std::printf("# check: %lld wrong element(s) over all sizes and topologies\n", static_cast<long long>(wrong));
  }
  c->barrier()->wait();
  if (wrong > 0) {
    std::fprintf(stderr, "dtbench allreduce: %lld element(s) differ from the exact sum\n", static_cast<long long>(wrong));
    return 1;
  }
  return 0;
}

}  // namespace dtbench::experiments
