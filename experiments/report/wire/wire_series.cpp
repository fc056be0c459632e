#include "experiments/report/wire/wire_series.h"

#include <algorithm>
#include <cmath>

namespace dtbench::report {

int64_t millis(double seconds) { return std::llround(seconds * 1000.0); }

namespace {

constexpr int64_t kCountedBinMs = 10;  // traffic_timeline.csv's bins
constexpr char kLoopbackSuffix[] = ":lo";

int directionOrder(const std::string& direction) {
  return direction == "up" ? 0 : direction == "down" ? 1 : direction == "local" ? 2 : 3;
}

}  // namespace

std::optional<CaptureWindow> captureWindow(const WireData& wire) {
  if (wire.links.empty()) return std::nullopt;
  CaptureWindow window{millis(wire.links.front().startS), millis(wire.links.front().startS)};
  for (const WireLinkBin& bin : wire.links) {
    window.startMs = std::min(window.startMs, millis(bin.startS));
    window.endMs = std::max(window.endMs, millis(bin.startS) + bin.binMs);
  }
  return window;
}

bool LinkDirection::operator<(const LinkDirection& other) const {
  if (link != other.link) return link < other.link;
  if (directionOrder(direction) != directionOrder(other.direction))
    return directionOrder(direction) < directionOrder(other.direction);
  return direction < other.direction;
}

std::string linkHost(const std::string& link) {
  const std::string suffix = kLoopbackSuffix;
  if (link.size() > suffix.size() && link.compare(link.size() - suffix.size(), suffix.size(), suffix) == 0)
    return link.substr(0, link.size() - suffix.size());
  return link;
}

std::map<LinkDirection, BinSeries> wireLinkSeries(const WireData& wire, int binMs) {
  std::map<LinkDirection, BinSeries> series;
  for (const WireLinkBin& bin : wire.links)
    if (bin.binMs == binMs) series[{bin.link, bin.direction}][millis(bin.startS)] += bin.frameBytes;
  return series;
}

std::string hostOfRank(const RunData& run, int rank) {
  if (!run.facts.world || rank < 0 || static_cast<size_t>(rank) >= run.facts.world->hosts.size()) return "";
  return run.facts.world->hosts[static_cast<size_t>(rank)];
}

std::optional<BinSeries> countedLinkSeries(const RunData& run, const LinkDirection& link) {
  if (run.timeline.empty() || hostOfRank(run, 0).empty()) return std::nullopt;
  const std::string node = linkHost(link.link);
  BinSeries series;
  for (const run::TimelineEntry& e : run.timeline) {
    const std::string src = hostOfRank(run, e.src), dst = hostOfRank(run, e.dst);
    const bool on = link.direction == "up"     ? src == node && dst != node
                    : link.direction == "down" ? dst == node && src != node
                                               : src == node && dst == node;
    if (on) series[millis(e.startS) / kCountedBinMs * kCountedBinMs] += e.bytes;
  }
  return series;
}

std::pair<int64_t, int64_t> sumAndPeak(const BinSeries& series, int64_t fromMs, int64_t toMs) {
  int64_t sum = 0, peak = 0;
  for (auto it = series.lower_bound(fromMs); it != series.end() && it->first < toMs; ++it) {
    sum += it->second;
    peak = std::max(peak, it->second);
  }
  return {sum, peak};
}

}  // namespace dtbench::report
