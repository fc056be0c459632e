#include "comm/traffic/traffic_exchange.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>

#include "comm/allgather_values.h"

namespace dtbench::comm {

MergedTraffic gatherTraffic(Communicator& c, const TrafficRecorder& recorder) {
  std::vector<int64_t> row(recorder.sentTo());
  row.insert(row.end(), recorder.modelledSentTo().begin(), recorder.modelledSentTo().end());
  const auto matrix = allgatherInt64(c, row);
  std::vector<int64_t> flatTimeline;
  for (const auto& t : timelineRows(recorder)) flatTimeline.insert(flatTimeline.end(), {t.bin, t.dst, t.bytes});
  const auto timelines = allgatherInt64Ragged(c, flatTimeline);
  const int n = c.size();
  MergedTraffic merged;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      merged.traffic.push_back({s, d, matrix[s][d], "counted"});
      merged.traffic.push_back({s, d, matrix[s][n + d], "modelled"});
    }
  for (int s = 0; s < n; ++s)
    for (size_t i = 0; i + 2 < timelines[s].size(); i += 3)
      merged.timeline.push_back({timelines[s][i], s, static_cast<int>(timelines[s][i + 1]), timelines[s][i + 2]});
  std::sort(merged.timeline.begin(), merged.timeline.end(), [](const auto& a, const auto& b) {
    return std::tie(a.bin, a.src, a.dst) < std::tie(b.bin, b.src, b.dst);
  });
  return merged;
}

}  // namespace dtbench::comm
