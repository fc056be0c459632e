#pragma once
// --inject-step-jitter in the step: this rank's delay of a step (run/step_jitter.h, drawn from the run's
// seed, the rank and the global step), slept on the training thread where TrainStep calls it, at the end
// of the forward phase, so that batches.csv's forward_s and the step's compute hold it.

#include <cstdint>

#include "run/run_config.h"

namespace dtbench::trainer {

// Sleeps config.stepJitter's delay of `rank` in `globalStep`; returns at once without a jitter.
void sleepStepJitter(const run::RunConfig& config, int64_t rank, int64_t globalStep);

}  // namespace dtbench::trainer
