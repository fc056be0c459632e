#include "experiments/report/wire/wire_section.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "experiments/report/wire/wire_series.h"

namespace dtbench::report {
namespace {

constexpr double kBytesPerGB = 1e9;

Cell gigabytes(int64_t bytes) { return Cell::rate(static_cast<double>(bytes) / kBytesPerGB); }

// Bytes over `seconds` in GB/s.
double gbps(int64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / kBytesPerGB; }

Cell quotient(double numerator, double denominator) {
  return denominator > 0 ? Cell::ratio(numerator / denominator) : Cell::empty();
}

// The host pair's bytes from the capture and from traffic.csv.
struct HostPairBytes {
  int64_t payload = 0, frame = 0, counted = 0;
};

}  // namespace

Table wireMatrixTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "wire_matrix";
  table.title = "The wire: bytes per host pair, captured and counted";
  table.columns = {"id",      "src_host",      "dst_host",      "payload_bytes",       "payload_GB",
                   "frame_bytes", "frame_GB",  "counted_bytes", "counted_GB", "payload_over_counted"};
  for (const RunData& run : runs) {
    if (!run.wire) continue;
    std::map<std::pair<std::string, std::string>, HostPairBytes> pairs;
    for (const WirePair& p : run.wire->pairs) {
      HostPairBytes& bytes = pairs[{p.srcHost, p.dstHost}];
      bytes.payload += p.tcpPayloadBytes;
      bytes.frame += p.frameBytes;
    }
    const bool counted = !run.traffic.empty() && !hostOfRank(run, 0).empty();
    if (counted)
      for (const run::TrafficEntry& e : run.traffic) pairs[{hostOfRank(run, e.src), hostOfRank(run, e.dst)}].counted += e.bytes;
    for (const auto& [hosts, bytes] : pairs) {
      std::vector<Cell> cells = {Cell::of(run.id),           Cell::of(hosts.first),    Cell::of(hosts.second),
                                 Cell::integral(bytes.payload), gigabytes(bytes.payload), Cell::integral(bytes.frame),
                                 gigabytes(bytes.frame)};
      if (counted) {
        cells.push_back(Cell::integral(bytes.counted));
        cells.push_back(gigabytes(bytes.counted));
        cells.push_back(quotient(static_cast<double>(bytes.payload), static_cast<double>(bytes.counted)));
      } else {
        cells.insert(cells.end(), {Cell::empty(), Cell::empty(), Cell::empty()});
      }
      table.rows.push_back(std::move(cells));
    }
  }
  table.notes = {
      "- Per run and directed host pair: `payload_bytes` = Σ `tcp_payload_bytes` and `frame_bytes` = Σ `frame_bytes` "
      "of wire/wire_pairs.csv's address pairs with these `src_host`/`dst_host` (a same-host pair X → X is the "
      "traffic on X's `lo`); GB = 10^9 bytes.",
      "- `counted_bytes` = Σ bytes of traffic.csv (counted and modelled rows alike) over the rank pairs whose hosts "
      "(config.json's `hosts`, rank → host) are the pair, 0 for a pair no rank pair maps to; empty without "
      "traffic.csv or hosts. `payload_over_counted` = payload_bytes / counted_bytes, empty when nothing was "
      "counted."};
  return table;
}

Table wireFlowsTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "wire_flows";
  table.title = "The wire: flows by class and retransmissions";
  table.columns = {"id",    "flows",  "backend",  "store", "launcher", "slurm", "other", "retransmitted_packets",
                   "retransmitted_bytes", "timeouts"};
  const char* classes[] = {"backend", "store", "launcher", "slurm", "other"};
  for (const RunData& run : runs) {
    if (!run.wire) continue;
    std::map<std::string, int64_t> perClass;
    int64_t packets = 0, bytes = 0, timeouts = 0;
    for (const WireFlow& f : run.wire->flows) {
      ++perClass[f.flowClass];
      packets += f.retransmittedPackets;
      bytes += f.retransmittedBytes;
      timeouts += f.timeouts;
    }
    std::vector<Cell> cells = {Cell::of(run.id), Cell::integral(static_cast<int64_t>(run.wire->flows.size()))};
    for (const char* c : classes) cells.push_back(Cell::integral(perClass[c]));
    cells.insert(cells.end(), {Cell::integral(packets), Cell::integral(bytes), Cell::integral(timeouts)});
    table.rows.push_back(std::move(cells));
  }
  table.notes = {
      "- From wire/wire_flows.csv: `flows` = its rows (directed flows: a TCP connection is two), then the rows of "
      "each `class`; `retransmitted_packets`, `retransmitted_bytes` and `timeouts` are the sums of those columns "
      "over every flow."};
  return table;
}

Table burstinessTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "burstiness";
  table.title = "The wire: burstiness per link";
  table.columns = {"id",
                   "link",
                   "direction",
                   "window_s",
                   "mean_GBps",
                   "peak_1ms_GBps",
                   "peak_5ms_GBps",
                   "peak_10ms_GBps",
                   "peak_over_mean_1ms",
                   "peak_over_mean_5ms",
                   "peak_over_mean_10ms",
                   "counted_window",
                   "counted_mean_GBps",
                   "counted_peak_10ms_GBps",
                   "counted_peak_over_mean_10ms"};
  constexpr int kWidths[] = {1, 5, 10};
  for (const RunData& run : runs) {
    if (!run.wire) continue;
    const std::optional<CaptureWindow> window = captureWindow(*run.wire);
    if (!window) continue;
    std::map<int, std::map<LinkDirection, BinSeries>> wire;
    std::set<LinkDirection> links;
    for (int width : kWidths) {
      wire[width] = wireLinkSeries(*run.wire, width);
      for (const auto& entry : wire[width]) links.insert(entry.first);
    }
    // The counted side over the capture window; over the timeline's own span when none of its bins
    // falls in the window (the clocks or the times disagree).
    std::map<LinkDirection, std::optional<BinSeries>> counted;
    bool countedInWindow = false;
    int64_t timelineStart = 0, timelineEnd = 0;
    for (const LinkDirection& link : links) {
      counted[link] = countedLinkSeries(run, link);
      if (!counted[link] || counted[link]->empty()) continue;
      countedInWindow |= sumAndPeak(*counted[link], window->startMs, window->endMs).first > 0;
      const int64_t first = counted[link]->begin()->first, last = counted[link]->rbegin()->first + 10;
      timelineStart = timelineEnd == 0 ? first : std::min(timelineStart, first);
      timelineEnd = std::max(timelineEnd, last);
    }
    const CaptureWindow countedWindow = countedInWindow || timelineEnd == 0 ? *window
                                                                             : CaptureWindow{timelineStart, timelineEnd};
    const double seconds = window->seconds();
    for (const LinkDirection& link : links) {
      int64_t total = 0;
      for (int width : {10, 5, 1})
        if (total == 0) total = sumAndPeak(wire[width][link], window->startMs, window->endMs).first;
      const double mean = gbps(total, seconds);
      std::vector<Cell> cells = {Cell::of(run.id), Cell::of(link.link), Cell::of(link.direction),
                                 Cell::seconds(seconds), Cell::rate(mean)};
      std::vector<double> peaks;
      for (int width : kWidths) {
        const auto series = wire[width].find(link);
        peaks.push_back(series == wire[width].end()
                            ? NAN
                            : gbps(sumAndPeak(series->second, window->startMs, window->endMs).second, width / 1000.0));
      }
      for (double peak : peaks) cells.push_back(std::isnan(peak) ? Cell::empty() : Cell::rate(peak));
      for (double peak : peaks) cells.push_back(std::isnan(peak) ? Cell::empty() : quotient(peak, mean));
      if (counted[link]) {
        const auto [sum, peakBytes] = sumAndPeak(*counted[link], countedWindow.startMs, countedWindow.endMs);
        const double countedMean = gbps(sum, countedWindow.seconds()), countedPeak = gbps(peakBytes, 0.010);
        cells.insert(cells.end(), {Cell::of(countedInWindow ? "capture" : "timeline"), Cell::rate(countedMean),
                                   Cell::rate(countedPeak), quotient(countedPeak, countedMean)});
      } else {
        cells.insert(cells.end(), {Cell::empty(), Cell::empty(), Cell::empty(), Cell::empty()});
      }
      table.rows.push_back(std::move(cells));
    }
  }
  table.notes = {
      "- Per run, link and direction of wire/wire_links.csv (frame bytes, what the link carried). The window is the "
      "run's capture: from the start of its earliest bin to the end of its latest, over every link and bin width "
      "(`window_s` seconds); bins without packets count as 0. `mean_GBps` = the link direction's bytes in the window "
      "/ window_s / 10^9; `peak_Wms_GBps` = its largest W ms bin's bytes / W ms / 10^9; `peak_over_mean_Wms` = "
      "peak / mean (1 for a perfectly smooth link).",
      "- Counted: traffic_timeline.csv's 10 ms bins of the rank pairs on the same link direction (hosts from "
      "config.json: `up` = the node sends to another node, `down` = it receives from one, `local` = both ranks on "
      "the node), over the capture window (`counted_window` capture) or, when none of its bins falls in it, over "
      "the timeline's own span from its first bin to the end of its last (`timeline`); empty without "
      "traffic_timeline.csv or hosts."};
  return table;
}

Table reconciliationTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "reconciliation";
  table.title = "The wire: reconciliation of counted and captured bytes";
  table.columns = {"id",       "src_rank",      "dst_rank",   "src_host",         "dst_host",      "category",
                   "messages", "counted_bytes", "wire_bytes", "difference_bytes", "difference_pct"};
  for (const RunData& run : runs) {
    if (!run.wire) continue;
    for (const ReconciliationRow& r : run.wire->reconciliation)
      table.rows.push_back({Cell::of(run.id), Cell::integral(r.srcRank), Cell::integral(r.dstRank), Cell::of(r.srcHost),
                            Cell::of(r.dstHost), Cell::of(r.category), Cell::integral(r.messages),
                            Cell::integral(r.countedBytes), Cell::integral(r.wireBytes),
                            Cell::integral(r.differenceBytes),
                            std::isnan(r.differencePct) ? Cell::empty() : Cell::ratio(r.differencePct)});
  }
  table.notes = {"- The rows of wire/reconciliation.csv as `dtbench capture analyze --messages` wrote them "
                 "(docs/wire.md), in its order; `difference_pct` is a percentage."};
  return table;
}

Table reconciliationSummaryTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "reconciliation_summary";
  table.title = "The wire: reconciliation per run";
  table.columns = {"id",           "wire_payload_bytes", "unattributed_bytes", "attributed_share",
                   "max_gradient_error_pct", "max_counted_error_pct", "source"};
  for (const RunData& run : runs) {
    if (!run.wire || !run.wire->hasReconciliation) continue;
    int64_t total = 0, unattributed = 0;
    double largest = NAN, largestCounted = NAN;
    const auto widen = [](double& most, double value) { most = std::isnan(most) ? value : std::max(most, value); };
    for (const ReconciliationRow& r : run.wire->reconciliation) {
      total += r.wireBytes;
      if (r.category == "unattributed") unattributed += r.wireBytes;
      if (std::isnan(r.differencePct)) continue;  // no counted bytes
      if (r.category == "gradients") widen(largest, std::fabs(r.differencePct));
      widen(largestCounted, std::fabs(r.differencePct));
    }
    std::string source = "reconciliation.csv";
    const nlohmann::json& summary = run.wire->summary;
    if (summary.is_object() && summary.contains("reconciliation") && summary["reconciliation"].is_object()) {
      const nlohmann::json& s = summary["reconciliation"];
      const auto whole = [&s](const char* key) { return s.contains(key) && s[key].is_number_integer(); };
      if (whole("wire_payload_bytes") && whole("unattributed_bytes")) {
        total = s["wire_payload_bytes"].get<int64_t>();
        unattributed = s["unattributed_bytes"].get<int64_t>();
        source = "wire_summary.json";
      }
      if (s.contains("max_gradient_error_pct") && s["max_gradient_error_pct"].is_number()) {
        largest = std::fabs(s["max_gradient_error_pct"].get<double>());
        source = "wire_summary.json";
      }
      if (s.contains("max_counted_error_pct") && s["max_counted_error_pct"].is_number())
        largestCounted = std::fabs(s["max_counted_error_pct"].get<double>());
    }
    table.rows.push_back({Cell::of(run.id), Cell::integral(total), Cell::integral(unattributed),
                          total > 0 ? Cell::ratio(1.0 - static_cast<double>(unattributed) / static_cast<double>(total))
                                    : Cell::empty(),
                          std::isnan(largest) ? Cell::empty() : Cell::ratio(largest),
                          std::isnan(largestCounted) ? Cell::empty() : Cell::ratio(largestCounted), Cell::of(source)});
  }
  table.notes = {
      "- Per run with wire/reconciliation.csv: `wire_payload_bytes` = Σ `wire_bytes` over its rows (every byte of "
      "TCP payload, every category), `unattributed_bytes` = Σ of the `unattributed` rows, `attributed_share` = 1 − "
      "unattributed / total (the share a named category explains), `max_gradient_error_pct` = the largest "
      "|difference_pct| of the `gradients` rows, `max_counted_error_pct` the same over the rows of every category "
      "with counted bytes. Taken from wire_summary.json's `reconciliation` object (`wire_payload_bytes`, "
      "`unattributed_bytes`, `max_gradient_error_pct`, `max_counted_error_pct`) where it has them (`source`), else "
      "computed from the CSV."};
  return table;
}

std::vector<Table> wireTables(const std::vector<RunData>& runs) {
  bool any = false;
  for (const RunData& run : runs) any |= run.wire.has_value();
  if (!any) return {};
  return {wireMatrixTable(runs), wireFlowsTable(runs), burstinessTable(runs), reconciliationTable(runs),
          reconciliationSummaryTable(runs)};
}

}  // namespace dtbench::report
