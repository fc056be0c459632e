#include "comm/topology/clique.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dtbench::comm {

namespace {

Schedule clique(int worldSize, int senders) {
  Schedule schedule{"clique", worldSize, worldSize, {}};
  if (worldSize < 2) return schedule;
  for (int phase = 0; phase < 2; ++phase) {
    Step step;
    for (int src = 0; src < senders; ++src)
      for (int dst = 0; dst < worldSize; ++dst) {
        if (src == dst) continue;
        const int chunk = phase == 0 ? dst : src;
        step.transfers.push_back(Transfer{src, dst, chunk, chunk + 1, phase == 0});
      }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace

Schedule cliqueSchedule(int worldSize) { return clique(worldSize, worldSize); }

Schedule cliqueSlice(int worldSize, int period) {
  if (period < 1 || worldSize % period != 0)
    throw std::invalid_argument("a clique slice's period (" + std::to_string(period) + ") must divide the world (" +
                                std::to_string(worldSize) + ")");
  Schedule schedule = clique(worldSize, period);
  schedule.slicePeriod = period;
  return schedule;
}

}  // namespace dtbench::comm
