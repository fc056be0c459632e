#pragma once
// The parameter checksum: the float64 sum of every parameter of a model, as summary.json records it
// ("param_checksum", and every rank's in "param_checksums"), and the correctness guard built on it
// (docs/design.md, "Correctness guards"): under --sync ssgd every rank holds the same parameters
// after every step, so their checksums are equal bit for bit.

#include <cstdint>

#include <torch/nn/module.h>

#include "comm/communicator.h"

namespace dtbench::trainer {

double parameterChecksum(const torch::nn::Module& model);

// --check-every: collective. Throws std::runtime_error naming both ranks and checksums when some
// rank's checksum differs from this rank's after step `globalStep`.
void checkParametersAgree(comm::Communicator& communicator, const torch::nn::Module& model, int64_t globalStep);

}  // namespace dtbench::trainer
