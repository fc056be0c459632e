#include "comm/topology/ring.h"

#include <string>
#include <utility>

namespace dtbench::comm {

std::vector<Step> ringSteps(const std::vector<int>& members) {
  const int m = static_cast<int>(members.size());
  std::vector<Step> steps;
  for (int phase = 0; phase < 2; ++phase) {
    const bool reduce = phase == 0;
    for (int s = 0; s < m - 1; ++s) {
      Step step;
      for (int i = 0; i < m; ++i) {
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

int64_t ringBytesPerRank(int64_t bytes, int worldSize) {
  return worldSize < 2 ? 0 : 2 * (worldSize - 1) * bytes / worldSize;
}

double ringBusBandwidth(double algbw, int worldSize) { return algbw * 2.0 * (worldSize - 1) / worldSize; }

}  // namespace dtbench::comm
