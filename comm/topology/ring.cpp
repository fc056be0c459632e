#include "comm/topology/ring.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace dtbench::comm {

std::vector<Step> ringSteps(const std::vector<int>& members, int positions) {
  const int m = static_cast<int>(members.size());
  const int senders = positions < 0 ? m : std::min(positions, m);
  std::vector<Step> steps;
  for (int phase = 0; phase < 2; ++phase) {
    const bool reduce = phase == 0;
    for (int s = 0; s < m - 1; ++s) {
      Step step;
      for (int i = 0; i < senders; ++i) {
        const int chunk = ((reduce ? i - s : i + 1 - s) % m + m) % m;
        step.transfers.push_back(Transfer{members[i], members[(i + 1) % m], chunk, chunk + 1, reduce});
      }
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

Schedule ringSchedule(int worldSize) {
  std::vector<int> members;
  for (int r = 0; r < worldSize; ++r) members.push_back(r);
  return Schedule{"ring", worldSize, worldSize, ringSteps(members)};
}

Schedule ringSlice(int worldSize, int period) {
  if (period < 1 || worldSize % period != 0)
    throw std::invalid_argument("a ring slice's period (" + std::to_string(period) + ") must divide the world (" +
                                std::to_string(worldSize) + ")");
  std::vector<int> members;
  for (int r = 0; r < worldSize; ++r) members.push_back(r);
  return Schedule{"ring", worldSize, worldSize, ringSteps(members, period), period};
}

int64_t ringBytesPerRank(int64_t bytes, int worldSize) {
  return worldSize < 2 ? 0 : 2 * (worldSize - 1) * bytes / worldSize;
}

double ringBusFactor(int worldSize) { return worldSize > 1 ? 2.0 * (worldSize - 1) / worldSize : 0; }

double ringBusBandwidth(double algbw, int worldSize) { return algbw * ringBusFactor(worldSize); }

}  // namespace dtbench::comm
