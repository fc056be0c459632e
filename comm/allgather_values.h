#pragma once
// Small metadata exchanges over any Communicator, whose collectives carry only float32, float16
// and bfloat16 (comm/element_type.h): integers travel as three exact 21-bit float32 limbs each,
// host names as one float32 per byte, raw bytes packed into float32 elements (allgather and
// broadcast only move them). Collective: every rank calls with the same shape.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace dtbench::comm {

// Every rank passes `values` of the same length (non-negative, < 2^63); returns all ranks' values,
// rank by rank.
std::vector<std::vector<int64_t>> allgatherInt64(Communicator& communicator, const std::vector<int64_t>& values);

// Like allgatherInt64, but lengths may differ between ranks.
std::vector<std::vector<int64_t>> allgatherInt64Ragged(Communicator& communicator, const std::vector<int64_t>& values);

// Every rank's bytes, of any length (rows of a log, encoded trace events), rank by rank. The bytes
// travel four to a float32 element and are never interpreted as numbers.
std::vector<std::string> allgatherBytes(Communicator& communicator, const std::string& bytes);

// Root's bytes, of any length, on every rank (`bytes` is ignored on the other ranks).
std::string broadcastBytes(Communicator& communicator, const std::string& bytes, int root);

// Every rank's double, bit for bit (e.g. a parameter checksum that must match exactly), rank by rank.
std::vector<double> allgatherDoubles(Communicator& communicator, double value);

// Every rank's string (at most 255 bytes), e.g. host names.
std::vector<std::string> allgatherStrings(Communicator& communicator, const std::string& value);

}  // namespace dtbench::comm
