#pragma once
// describeEnvironment: what config.json records about where a run ran: dtbench's version and
// build features, LibTorch's version, the MPI library (when this build has MPI), host name,
// threads and compiler. Enough to tell two runs' software apart.

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::trainer {

nlohmann::json describeEnvironment();

// The message of an exception without LibTorch's C++ backtrace; out of GPU or host memory named as such,
// with what to change.
std::string errorMessage(const std::exception& error);

}  // namespace dtbench::trainer
