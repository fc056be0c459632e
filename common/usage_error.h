#pragma once
// UsageError: a value the user gave that cannot work. The message names the flag and says what is
// allowed; every subcommand exits with kUsageErrorExitCode for it (experiments/cli/main.cpp), which
// the sweep reads as "not worth retrying" (experiments/sweep/point_attempts.h). Standard library
// only, so every layer can throw it without linking LibTorch.

#include <stdexcept>

namespace dtbench::common {

// The exit code of dtbench, and of `dtbench launch` (which passes on its rank's), for a UsageError.
inline constexpr int kUsageErrorExitCode = 2;

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace dtbench::common
