#pragma once
// StepRecord: what one rank measured in one training step: one row of batches.csv
// (docs/run-directory.md). One list of columns, batchColumns(), types the file: the trainer writes
// its rows through it, the report and predict read them back through it, summary.json's epoch sums
// and the checkpoint's steps follow it.
//
// Definitions (docs/design.md, "The step"; every report uses these):
// - step_s: the whole step, from the start of the wait for data to the end of the step's
//   bookkeeping (loss and accuracy read back), so an epoch's steps add up to its wall time;
// - data_s: waiting for the loader; h2d_s: host-to-device copy; forward_s: forward and loss;
//   backward_s: backward; optimizer_s: optimizer step and zeroing of gradients;
// - comm_total_s: length of the union of the step's collective intervals;
//   comm_exposed_s: from the end of backward to the completion of the last collective;
//   both 0 on a single rank, where nothing is synchronized.
// - compress_s: encoding and decoding the gradients for --compress (casts, PowerSGD's products and
//   orthogonalization), on the communication thread, so a part of comm_total_s (and of comm_exposed_s
//   where backward did not hide it); comm_total_s - compress_s is the collectives' own time. 0 without
//   compression.
// - grad_collectives: the gradients' all-reduces the rank issued in the step, counted as they went:
//   one a bucket (none, fp16, bf16, and PowerSGD's first compress_start steps), up to three a bucket
//   under PowerSGD (its uncompressed part, P and Q; config.json's bucket_collectives lists them);
//   0 under pair averaging (which exchanges parameters) and on one rank.
// - h2d_s, forward_s, backward_s and optimizer_s are NaN when the phase was not timed
//   (--phase-timing none): an empty cell in batches.csv, null in JSON.
// compute = step_s - data_s - comm_exposed_s.
//
// Adding a phase (docs/design.md, "Adding a phase"): its field in PhaseTimes, its row in
// batchColumns() (step_record.cpp), its line in docs/run-directory.md. batches.csv, summary.json's
// epoch sums, the checkpoint and every reader follow from the row.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/csv_file.h"

namespace dtbench::run {

// The timed phases of a step, in seconds: a step's own (StepRecord), or their sums over an epoch
// (EpochStats, run/epoch_stats.h).
struct PhaseTimes {
  double dataS = 0;
  double h2dS = 0;
  double forwardS = 0;
  double backwardS = 0;
  double commTotalS = 0;
  double commExposedS = 0;
  double optimizerS = 0;
  double stepS = 0;
  double compressS = 0;  // --compress: encoding and decoding the gradients, on the communication thread
};

struct StepRecord : PhaseTimes {
  int64_t rank = 0;
  int64_t epoch = 0;
  int64_t step = 0;  // 1-based within the epoch
  int64_t samples = 0;
  int64_t bytesSent = 0;
  int64_t bytesRecv = 0;
  int64_t gradCollectives = 0;

  // Not in batches.csv: what train_history.log reports for rank 0's batch.
  double loss = 0;
  double accuracy = 0;
};

// One column of batches.csv: a whole number of the step (`count`) or one of its phases (`phase`).
struct BatchColumn {
  const char* name;
  int64_t StepRecord::*count = nullptr;
  double PhaseTimes::*phase = nullptr;
  int64_t least = 0;              // a count's smallest value
  int64_t most = INT64_MAX;       // and its largest
  bool mayBeUntimed = false;      // a phase --phase-timing none leaves untimed: NaN, an empty cell
  bool addedLater = false;        // absent from files written before it existed, where it reads 0
};

// Every column, in batches.csv's order.
const std::vector<BatchColumn>& batchColumns();
// The phase columns alone, in the same order.
const std::vector<const BatchColumn*>& phaseColumns();

// The batches.csv header and one row.
std::string batchesCsvHeader();
std::string toCsvRow(const StepRecord& record);

// batches.csv read back. Throws std::runtime_error (through CsvFile::fail: the file, the line, the
// column) on anything the format rules out: a count out of range, a time that is not finite seconds
// from 0 to a year, a step_s of 0, a phase longer than its step, an empty cell where the phase is
// always timed, a (rank, epoch, step) row written twice.
std::vector<StepRecord> readBatchesCsv(const common::CsvFile& file);

// Every field, for checkpoints (a resumed epoch adds up the steps before the interruption too): an
// object under batches.csv's column names, with "loss" and "accuracy". stepRecordFromJson also
// reads the array of 16 numbers that checkpoints held before (written by dtbench until 0ad05bc), and
// an object without a phase column added after it was written (that phase reads 0).
nlohmann::json toJson(const StepRecord& record);
StepRecord stepRecordFromJson(const nlohmann::json& json);

}  // namespace dtbench::run
