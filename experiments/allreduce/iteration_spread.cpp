#include "experiments/allreduce/iteration_spread.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace dtbench::experiments {

common::SampleSpread iterationSpread(const std::vector<double>& gathered, int world, int iters) {
  if (world < 1 || iters < 1)
    throw std::invalid_argument("iteration spread: world " + std::to_string(world) + " and iterations " +
                                std::to_string(iters) + " must both be at least 1");
  const size_t expected = static_cast<size_t>(world) * static_cast<size_t>(iters);
  if (gathered.size() != expected)
    throw std::invalid_argument("iteration spread: " + std::to_string(gathered.size()) + " times gathered, want " +
                                std::to_string(world) + " ranks x " + std::to_string(iters) + " iterations");
  std::vector<double> slowest(static_cast<size_t>(iters), 0.0);
  for (size_t r = 0; r < static_cast<size_t>(world); ++r)
    for (size_t i = 0; i < static_cast<size_t>(iters); ++i)
      slowest[i] = std::max(slowest[i], gathered[r * static_cast<size_t>(iters) + i]);
  // sampleSpread refuses a negative or non-finite time (by index into the maxima); check the gathered
  // values first so that the message names the rank's own sample.
  for (size_t k = 0; k < gathered.size(); ++k)
    if (!(gathered[k] >= 0) || gathered[k] == std::numeric_limits<double>::infinity())
      throw std::invalid_argument("iteration spread: rank " + std::to_string(k / static_cast<size_t>(iters)) +
                                  "'s iteration " + std::to_string(k % static_cast<size_t>(iters)) + " took " +
                                  std::to_string(gathered[k]) + "; times must be finite and non-negative");
  return common::sampleSpread(slowest, "all-reduce iteration times");
}

}  // namespace dtbench::experiments
