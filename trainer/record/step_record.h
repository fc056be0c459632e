#pragma once
// StepRecord: what one rank measured in one training step: one row of batches.csv.
//
// Definitions (docs/design.md, "The step"; every report uses these):
// - step_s: the whole step, from the start of the wait for data to the end of the step's
//   bookkeeping (loss and accuracy read back), so an epoch's steps add up to its wall time;
// - data_s: waiting for the loader; h2d_s: host-to-device copy; forward_s: forward and loss;
//   backward_s: backward; optimizer_s: optimizer step and zeroing of gradients;
// - comm_total_s: length of the union of the step's collective intervals;
//   comm_exposed_s: from the end of backward to the completion of the last collective;
//   both 0 on a single rank, where nothing is synchronized.
// - h2d_s, forward_s, backward_s and optimizer_s are NaN when the phase was not timed
//   (--phase-timing none): an empty cell in batches.csv, null in JSON.
// compute = step_s - data_s - comm_exposed_s.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::trainer {

struct StepRecord {
  int64_t rank = 0;
  int64_t epoch = 0;
  int64_t step = 0;  // 1-based within the epoch
  int64_t samples = 0;
  double dataS = 0;
  double h2dS = 0;
  double forwardS = 0;
  double backwardS = 0;
  double commTotalS = 0;
  double commExposedS = 0;
  double optimizerS = 0;
  double stepS = 0;
  int64_t bytesSent = 0;
  int64_t bytesRecv = 0;

  // Not in batches.csv: what train_history.log reports for rank 0's batch.
  double loss = 0;
  double accuracy = 0;
};

// The batches.csv header and one row, in the column order of docs/run-directory.md.
const char* batchesCsvHeader();
std::string toCsvRow(const StepRecord& record);

// Every field, for checkpoints (a resumed epoch adds up the steps before the interruption too).
nlohmann::json toJson(const StepRecord& record);
StepRecord stepRecordFromJson(const nlohmann::json& json);

}  // namespace dtbench::trainer
