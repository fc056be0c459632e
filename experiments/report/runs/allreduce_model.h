#pragma once
// AllreduceModel: the bytes a run's gradient all-reduces move per step, from its config.json
// (docs/report.md, Table 3). The same formulas the communication layer follows:
//   native     the backend picks its own algorithm; dtbench models it as a ring: each rank sends
//              ⌊2(N−1)·bytes/N⌋ to the next rank per all-reduce (comm/traffic/traffic_recorder.h).
//   ring, tree, star, binary-tree-star, clique, hierarchical
//              the topology's Schedule (comm/topology/), summed per sender: exactly the bytes
//              dtbench moves, chunk rounding included.
// Worked example: lenet (62,006 parameters, one bucket of 62,007 float32 elements with the stop
// flag), ring over 2 ranks: each rank sends one chunk in the reduce-scatter and the other in the
// all-gather, 62,007 × 4 = 248,028 bytes per step.

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

struct AllreduceModel {
  bool available = false;  // false for pair averaging and for one rank
  std::string why;         // when not available
  std::string dtype;       // "float32", "float16", "bfloat16" or "mixed"
  int64_t gradientBytes = 0;  // S: bytes all-reduced per step, over every bucket
  int buckets = 0;
  // Per all-reduce of a step (one per bucket; with --compress powersgd up to three per bucket, from
  // config.json's bucket_collectives): its elements and the bytes of one element of its type.
  std::vector<int64_t> bucketElements;
  std::vector<int64_t> bucketElementBytes;
  // --compress: the name, and S of the same buckets all-reduced uncompressed (bucket_elements in
  // bucket_dtypes): S_uncompressed / S is the compression ratio. Without compression, equal to S.
  std::string compress = "none";
  int64_t uncompressedBytes = 0;
  bool fromParameters = false;          // S taken as model_parameters × 4 (config without bucket_elements)
  std::vector<int64_t> sentPerStep;     // per rank: bytes it sends per step
  std::vector<std::vector<int64_t>> matrixPerStep;  // [src][dst] per step
};

// Throws std::runtime_error naming the field when config.json lacks what the model needs.
// `uncompressed`: the step as the buckets would travel without --compress (PowerSGD's first
// --compress-start steps; the compression ratio's reference).
AllreduceModel allreduceModel(const RunData& run, bool uncompressed = false);

}  // namespace dtbench::report
