#pragma once
// RunSegment: one stretch of a run at one world (docs/run-directory.md, "segments"). A --resume at another
// world size (docs/design.md, "Resuming at another world size") starts a new segment; config.json,
// summary.json and the checkpoint's state.json list them ("segments") once a run has more than one. Written
// and read back here, by the trainer's checkpoint (trainer/checkpoint/checkpointer.h), the report and
// every other reader of a run directory.
//
// Resize latency: a segment after the first records when the previous segment's last kept step was
// recorded (previous_step_at: train_history.log's Timestamp of its "Batch" row, the last step the
// checkpoint holds) and when its own first step started (first_step_at: rank 0's clock before the step's
// data wait); resize_latency_s is their difference. For a run stopped by SIGTERM that step is the one the
// stop followed; after a SIGKILL it is the last checkpointed step, so the latency holds the steps trained
// after it and lost as well as the time the run was down.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::run {

struct RunSegment {
  int64_t firstGlobalStep = 1;  // "first_global_step": the run's step (1-based) the segment trained first
  int64_t worldSize = 1;        // "world_size"
  int64_t ranksPerNode = 0;     // "ranks_per_node": the most ranks on one host (0: not recorded)
  int64_t batchSize = 1;        // "batch_size": per rank
  int64_t globalBatchSize = 1;  // "global_batch_size": batchSize * worldSize
  double lr = 0;                // "lr": constant within a segment
  // Unix seconds (absent from the first segment, and from segments recorded before they existed; null
  // where unknown: no step before the segment, or its first step not yet trained).
  std::optional<double> previousStepAt;  // "previous_step_at"
  std::optional<double> firstStepAt;     // "first_step_at"

  // "resize_latency_s": firstStepAt − previousStepAt, when both are known.
  std::optional<double> resizeLatencyS() const;
};

// `afterFirst`: a segment after the run's first, which has a resize to time (its latency keys are written,
// null where unknown).
nlohmann::json segmentJson(const RunSegment& segment, bool afterFirst);
// One segment object read back. Throws std::invalid_argument naming the key ("world_size takes a whole
// number from 1 ..., got ...") for a value that is missing, of the wrong type or out of its range.
RunSegment readSegmentJson(const nlohmann::json& segment);

// A list of segments as config.json and summary.json hold it: each read by readSegmentJson, the first
// from step 1, the others in order of first_global_step, and global_batch_size = batch_size x world_size;
// std::invalid_argument naming the segment otherwise.
std::vector<RunSegment> readSegmentsJson(const nlohmann::json& list);
nlohmann::json segmentsJson(const std::vector<RunSegment>& segments);

// The index of the segment that trained the run's step `globalStep` (1-based): the last whose
// first_global_step is at most it. `segments` must not be empty.
size_t segmentOfStep(const std::vector<RunSegment>& segments, int64_t globalStep);

// A run's segments in words: "N=4 x B=6 from step 1, N=2 x B=12 from step 9".
std::string describeSegments(const std::vector<RunSegment>& segments);

}  // namespace dtbench::run
