#pragma once
// The wire's links as time series (docs/report.md, "The wire"): the capture window, each link
// direction's bins of wire_links.csv, and the counted bytes of traffic_timeline.csv on the same link
// direction, so that the burstiness table and the throughput figures use one definition.
//
// Times are kept as whole milliseconds since the Unix epoch (a bin's start rounded to the
// millisecond), so bins of 1, 5 and 10 ms line up exactly. A link direction of the wire is a node's
// link going `up` (the node sends), coming `down` (it receives), or its `lo` (`local`); the counted
// bytes on it are those of the rank pairs whose hosts (config.json's `hosts`, rank -> host) make the
// same move: up = host(src) is the node and host(dst) is not, down the other way round, local = both.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "experiments/report/runs/run_data.h"
#include "experiments/report/wire/wire_data.h"

namespace dtbench::report {

// [startMs, endMs): from the start of the earliest bin of wire_links.csv to the end of the latest,
// over every link and bin width (with aligned bins, the span of the 10 ms bins).
// Unix seconds as whole milliseconds (the unit of every time here), rounded to the nearest.
int64_t millis(double seconds);

struct CaptureWindow {
  int64_t startMs = 0, endMs = 0;
  double seconds() const { return static_cast<double>(endMs - startMs) / 1000.0; }
};
std::optional<CaptureWindow> captureWindow(const WireData& wire);

// A link direction; ordered by link, then up, down, local.
struct LinkDirection {
  std::string link;       // as in wire_links.csv
  std::string direction;  // up | down | local
  bool operator<(const LinkDirection& other) const;
};

// The node a link belongs to: "node1:lo" -> "node1", "node1" -> "node1".
std::string linkHost(const std::string& link);

using BinSeries = std::map<int64_t, int64_t>;  // bin start (ms) -> bytes; bins without bytes absent

// Frame bytes of every link direction in its bins of `binMs` (1, 5 or 10).
std::map<LinkDirection, BinSeries> wireLinkSeries(const WireData& wire, int binMs);

// The counted bytes of traffic_timeline.csv on `link`'s direction, per 10 ms bin; nullopt when the
// run names no hosts or has no timeline.
std::optional<BinSeries> countedLinkSeries(const RunData& run, const LinkDirection& link);

// The host of `rank` from config.json's hosts; empty when it names none.
std::string hostOfRank(const RunData& run, int rank);

// Σ bytes of the bins in [fromMs, toMs) and the largest of them.
std::pair<int64_t, int64_t> sumAndPeak(const BinSeries& series, int64_t fromMs, int64_t toMs);

}  // namespace dtbench::report
