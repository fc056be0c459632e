#include "experiments/report/wire/wire_figures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dtbench::report {
namespace {

constexpr int64_t kBinMs = 10;
constexpr double kBinSeconds = 0.010;

// Host x host matrix over `hosts` from (src host, dst host) -> bytes, in GB.
nlohmann::json matrixGB(const std::vector<std::string>& hosts,
                        const std::map<std::pair<std::string, std::string>, int64_t>& bytes) {
  nlohmann::json matrix = nlohmann::json::array();
  for (const std::string& src : hosts) {
    nlohmann::json row = nlohmann::json::array();
    for (const std::string& dst : hosts) {
      const auto it = bytes.find({src, dst});
      row.push_back(it == bytes.end() ? 0.0 : static_cast<double>(it->second) / 1e9);
    }
    matrix.push_back(row);
  }
  return matrix;
}

std::string flowLabel(const WireFlow& f) {
  if (f.srcRank >= 0 && f.dstRank >= 0) return std::to_string(f.srcRank) + "\u2192" + std::to_string(f.dstRank);
  return f.srcHost + ":" + std::to_string(f.srcPort) + "\u2192" + f.dstHost + ":" + std::to_string(f.dstPort);
}

}  // namespace

StepWindow throughputWindow(const RunData& run, const CaptureWindow& capture) {
  std::vector<double> ends;
  for (const run::HistoryRow& row : run.history)
    if (row.type == run::HistoryRowType::kBatch) ends.push_back(row.timestamp);
  std::vector<std::pair<std::pair<int, int64_t>, double>> rank0;
  for (const run::StepRecord& row : run.batches)
    if (row.rank == 0) rank0.push_back({{row.epoch, row.step}, row.stepS});
  std::sort(rank0.begin(), rank0.end());
  std::vector<std::pair<int64_t, int64_t>> inside;  // steps wholly in the capture
  for (size_t i = 0; i < ends.size(); ++i) {
    double start = NAN;
    if (rank0.size() == ends.size()) start = ends[i] - rank0[i].second;
    else if (i > 0) start = ends[i - 1];
    if (std::isnan(start)) continue;
    const int64_t from = millis(start), to = millis(ends[i]);
    if (from >= capture.startMs && to <= capture.endMs && from < to) inside.emplace_back(from, to);
  }
  if (!inside.empty()) {
    const size_t k = std::min<size_t>(kWindowSteps, inside.size()), first = (inside.size() - k) / 2;
    return {inside[first].first, inside[first + k - 1].second, true};
  }
  const int64_t middle = (capture.startMs + capture.endMs) / 2;
  return {std::max(capture.startMs, middle - 500), std::min(capture.endMs, middle + 500), false};
}

nlohmann::json wireFigureData(const RunData& run) {
  if (!run.wire) return nullptr;
  const std::optional<CaptureWindow> capture = captureWindow(*run.wire);
  if (!capture) return nullptr;

  std::map<std::pair<std::string, std::string>, int64_t> wireBytes, countedBytes;
  std::set<std::string> hostSet;
  for (const WirePair& p : run.wire->pairs) {
    wireBytes[{p.srcHost, p.dstHost}] += p.tcpPayloadBytes;
    hostSet.insert({p.srcHost, p.dstHost});
  }
  const bool counted = !run.traffic.empty() && !hostOfRank(run, 0).empty();
  if (counted)
    for (const run::TrafficEntry& e : run.traffic) {
      countedBytes[{hostOfRank(run, e.src), hostOfRank(run, e.dst)}] += e.bytes;
      hostSet.insert({hostOfRank(run, e.src), hostOfRank(run, e.dst)});
    }
  const std::vector<std::string> hosts(hostSet.begin(), hostSet.end());

  const StepWindow window = throughputWindow(run, *capture);
  const int64_t from = window.startMs / kBinMs * kBinMs, to = (window.endMs + kBinMs - 1) / kBinMs * kBinMs;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& [link, series] : wireLinkSeries(*run.wire, kBinMs)) {
    const std::optional<BinSeries> countedSeries = countedLinkSeries(run, link);
    nlohmann::json t = nlohmann::json::array(), wire = nlohmann::json::array(), countedRate = nlohmann::json::array();
    for (int64_t bin = from; bin < to; bin += kBinMs) {
      t.push_back(static_cast<double>(bin - from) / 1000.0);
      const auto w = series.find(bin);
      wire.push_back(w == series.end() ? 0.0 : static_cast<double>(w->second) / kBinSeconds / 1e9);
      if (countedSeries) {
        const auto c = countedSeries->find(bin);
        countedRate.push_back(c == countedSeries->end() ? 0.0 : static_cast<double>(c->second) / kBinSeconds / 1e9);
      }
    }
    nlohmann::json entry = {{"name", link.link + " " + link.direction}, {"t_s", t}, {"wire_GBps", wire}};
    if (countedSeries) entry["counted_GBps"] = countedRate;
    links.push_back(entry);
  }

  std::map<std::string, std::vector<std::pair<double, int64_t>>> binsOf;
  for (const WireFlowBin& b : run.wire->flowBins)
    binsOf[b.flow].emplace_back(static_cast<double>(millis(b.startS) - capture->startMs) / 1000.0, b.frameBytes);
  nlohmann::json flows = nlohmann::json::array();
  for (const WireFlow& f : run.wire->flows) {
    const auto it = binsOf.find(f.flow);
    if (it == binsOf.end()) continue;
    nlohmann::json t = nlohmann::json::array(), bytes = nlohmann::json::array();
    for (const auto& [start, frameBytes] : it->second) {
      t.push_back(start);
      bytes.push_back(frameBytes);
    }
    flows.push_back({{"label", flowLabel(f)}, {"class", f.flowClass}, {"t_s", t}, {"bytes", bytes}});
  }

  return {{"id", run.id},
          {"batch", run.batchSize()},
          {"hosts", hosts},
          {"wire_GB", matrixGB(hosts, wireBytes)},
          {"counted_GB", counted ? matrixGB(hosts, countedBytes) : nlohmann::json(nullptr)},
          {"capture_s", capture->seconds()},
          {"window", {{"start_s", static_cast<double>(from) / 1000.0},
                      {"end_s", static_cast<double>(to) / 1000.0},
                      {"from", window.fromSteps ? "steps" : "middle of the capture"}}},
          {"links", links},
          {"flows", flows},
          {"flows_total", run.wire->flows.size()}};
}

}  // namespace dtbench::report
