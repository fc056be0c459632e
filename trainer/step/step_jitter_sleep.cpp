#include "trainer/step/step_jitter_sleep.h"

#include <chrono>
#include <thread>

namespace dtbench::trainer {

void sleepStepJitter(const run::RunConfig& config, int64_t rank, int64_t globalStep) {
  if (!config.stepJitter.active()) return;
  const double delayS = config.stepJitter.delayS(config.seed, rank, globalStep);
  // sleep_until on the steady clock: a sleep interrupted by a signal resumes to the same end.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(delayS);
  std::this_thread::sleep_until(until);
}

}  // namespace dtbench::trainer
