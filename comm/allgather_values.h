#pragma once
// Small metadata exchanges over any Communicator, whose collectives carry only float32, float16
// and bfloat16 (comm/element_type.h): integers travel as three exact 21-bit float32 limbs each,
// strings as one float32 per byte. Collective: every rank calls with the same shape.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace dtbench::comm {

// Every rank passes `values` of the same length (non-negative, < 2^63); returns all ranks' values,
// rank by rank.
std::vector<std::vector<int64_t>> allgatherInt64(Communicator& communicator, const std::vector<int64_t>& values);

// Like allgatherInt64, but lengths may differ between ranks.
std::vector<std::vector<int64_t>> allgatherInt64Ragged(Communicator& communicator, const std::vector<int64_t>& values);

// Every rank's string (at most 255 bytes), e.g. host names.
std::vector<std::string> allgatherStrings(Communicator& communicator, const std::string& value);

}  // namespace dtbench::comm
