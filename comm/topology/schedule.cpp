#include "comm/topology/schedule.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <set>
#include <stdexcept>

namespace dtbench::comm {
namespace {

// contributions[rank][chunk][origin]: how many times origin's value is summed into rank's chunk.
using Contributions = std::vector<std::vector<std::vector<int>>>;

std::string describe(const Transfer& t, size_t step) {
  return "step " + std::to_string(step) + ": " + std::to_string(t.src) + " -> " + std::to_string(t.dst) +
         " chunks [" + std::to_string(t.firstChunk) + ", " + std::to_string(t.endChunk) + ")";
}

}  // namespace

ElementRange chunkRange(int64_t numel, int chunks, int firstChunk, int endChunk) {
  return ElementRange{numel * firstChunk / chunks, numel * endChunk / chunks};
}

int segmentCount(const Schedule& schedule, int64_t numel, int64_t elementBytes, int64_t segmentBytes) {
  if (segmentBytes < 0) throw std::invalid_argument("segment size must be >= 0 bytes (0: no segments)");
  if (segmentBytes == 0 || schedule.chunks < 1) return 1;
  const int64_t chunkBytes = (numel + schedule.chunks - 1) / schedule.chunks * elementBytes;
  return static_cast<int>(std::clamp<int64_t>(chunkBytes / segmentBytes, 1, kMaxSegments));
}

ElementRange segmentRange(int64_t numel, int chunks, int chunk, int segment, int segments) {
  const ElementRange c = chunkRange(numel, chunks, chunk, chunk + 1);
  return ElementRange{c.begin + c.size() * segment / segments, c.begin + c.size() * (segment + 1) / segments};
}

std::string verifySchedule(const Schedule& s) {
  const int n = s.worldSize;
  Contributions state(n, std::vector<std::vector<int>>(s.chunks, std::vector<int>(n, 0)));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < s.chunks; ++c) state[r][c][r] = 1;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Contributions before = state;
    std::set<std::pair<int, int>> overwritten;  // (rank, chunk) copied into during this step
    for (const Transfer& t : s.steps[i].transfers) {
      if (t.src < 0 || t.src >= n || t.dst < 0 || t.dst >= n || t.src == t.dst)
        return describe(t, i) + ": ranks out of range or a self-transfer";
      if (t.firstChunk < 0 || t.endChunk > s.chunks || t.firstChunk >= t.endChunk)
        return describe(t, i) + ": empty or out-of-range chunks";
      for (int c = t.firstChunk; c < t.endChunk; ++c) {
        if (overwritten.count({t.dst, c})) return describe(t, i) + ": chunk " + std::to_string(c) + " written twice";
        if (t.reduce) {
          for (int o = 0; o < n; ++o) state[t.dst][c][o] += before[t.src][c][o];
        } else {
          if (state[t.dst][c] != before[t.dst][c])
            return describe(t, i) + ": chunk " + std::to_string(c) + " both reduced into and overwritten";
          state[t.dst][c] = before[t.src][c];
          overwritten.insert({t.dst, c});
        }
      }
    }
  }
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < s.chunks; ++c)
      for (int o = 0; o < n; ++o)
        if (state[r][c][o] != 1)
          return "rank " + std::to_string(r) + " ends with chunk " + std::to_string(c) + " holding rank " +
                 std::to_string(o) + "'s contribution " + std::to_string(state[r][c][o]) + " times";
  return "";
}

std::vector<std::vector<int64_t>> scheduleTraffic(const Schedule& s, int64_t numel, int64_t elementBytes) {
  std::vector<std::vector<int64_t>> bytes(s.worldSize, std::vector<int64_t>(s.worldSize, 0));
  for (const Step& step : s.steps)
    for (const Transfer& t : step.transfers)
      bytes[t.src][t.dst] += chunkRange(numel, s.chunks, t.firstChunk, t.endChunk).size() * elementBytes;
  return bytes;
}

std::vector<std::pair<int, int>> scheduleEdges(const Schedule& s) {
  std::set<std::pair<int, int>> edges;
  for (const Step& step : s.steps)
    for (const Transfer& t : step.transfers) edges.insert({t.src, t.dst});
  return {edges.begin(), edges.end()};
}

}  // namespace dtbench::comm
