#include "trainer/phase_clock.h"

#include <torch/cuda.h>

namespace dtbench::trainer {

std::chrono::steady_clock::time_point PhaseClock::now() const {
  if (syncDevice_) torch::cuda::synchronize();
  return std::chrono::steady_clock::now();
}

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace dtbench::trainer
