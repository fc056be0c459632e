#pragma once
// UsageError: a value the user gave that cannot work. The message names the flag and says what is
// allowed; every subcommand exits with code 2 for it (experiments/cli/main.cpp). Standard library
// only, so every layer can throw it without linking LibTorch.

#include <stdexcept>

namespace dtbench::common {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace dtbench::common
