#include "comm/topology/clique.h"

#include <string>
#include <utility>
#include <vector>

namespace dtbench::comm {

Schedule cliqueSchedule(int worldSize) {
  Schedule schedule{"clique", worldSize, worldSize, {}};
  if (worldSize < 2) return schedule;
  for (int phase = 0; phase < 2; ++phase) {
    Step step;
    for (int src = 0; src < worldSize; ++src)
      for (int dst = 0; dst < worldSize; ++dst) {
        if (src == dst) continue;
        const int chunk = phase == 0 ? dst : src;
        step.transfers.push_back(Transfer{src, dst, chunk, chunk + 1, phase == 0});
      }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace dtbench::comm
