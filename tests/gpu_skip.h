#pragma once
// DTBENCH_SKIP_WITHOUT_GPU(): the first line of a case of the gpu label (tests/skip.h).

#include <torch/cuda.h>

#include "skip.h"

namespace dtbench::testing {

inline bool gpuVisible() { return torch::cuda::is_available(); }

}  // namespace dtbench::testing

// At the start of a case that needs a GPU: without one, reports the skip and returns.
#define DTBENCH_SKIP_WITHOUT_GPU()                                                        \
  do {                                                                                    \
    if (!::dtbench::testing::gpuVisible()) {                                              \
      ::dtbench::testing::skipTest("no GPU is visible (a test of the gpu label)");       \
      return;                                                                             \
    }                                                                                     \
  } while (0)
