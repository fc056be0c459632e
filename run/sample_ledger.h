#pragma once
// The sample ledger (`dtbench train --sample-ledger`): which dataset indices each step of each rank put
// into its batch, one file per rank, sample_ledger.rank<R>.csv, one row per (segment, epoch, step).
// `dtbench audit` (experiments/audit/) reads it back to check that every epoch trained on every sample of
// the training set exactly once. This file types it: the row, its CSV form, the writer and the reader.
//
// A row holds the indices the loader actually gathered into the batch (data::Batch::indices), not
// positions to be recomputed through the sampler, so that the audit catches a sampler that repeats or
// skips a sample. They are written sorted, as a multiset of ranges: "3-7;12;40-41" is 3,4,5,6,7,12,40,41;
// an index that the batch holds twice opens a second range ("5;5-6" is 5,5,6), so nothing is lost.
// Beside them a row carries what the audit's expectation for its epoch derives from: the dataset's size,
// the per-rank batch size, the steps the epoch runs (less than a full epoch under --max-steps), drop-last
// and the seed of the epoch's permutation (data/sampler.h); and the world it ran in: the world size and
// its segment. A segment is one stretch of the run at one world size: 0 for a run and for every --resume
// at the same world size, which appends to the same files; a run resumed at another world size
// starts the next segment, so one run directory may hold rows of several segments.
//
// Rank 0 writes every rank's file (the other ranks send their rows with their batches.csv rows at every
// epoch end and checkpoint, trainer/record/run_recorder.h), so no shared filesystem is needed; rows reach
// the disk at every flush(), as batches.csv's do, so a killed run keeps every row of its finished epochs.
// --resume cuts every rank's file back to the rows of the steps the checkpoint holds (the steps after it
// are trained again) and appends.

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dtbench::run {

struct LedgerRow {
  int64_t segment = 0;
  int64_t worldSize = 1;
  int64_t rank = 0;
  int64_t epoch = 1;
  int64_t step = 1;        // 1-based within the epoch
  int64_t globalStep = 1;  // 1-based over the whole run
  // The epoch as the segment planned it.
  int64_t datasetSize = 0;  // training samples
  int64_t batchSize = 1;    // per rank
  int64_t epochSteps = 1;   // steps of every epoch: a full epoch's, or --max-steps
  bool dropLast = false;
  uint64_t seed = 0;        // the permutation's: data::epochPermutation(seed, epoch, datasetSize)
  std::vector<int64_t> indices;  // the batch's dataset indices, sorted (a repeated one repeated)
};

// The indices (any order) as sorted ranges, "3-7;12;40-41"; "" for none.
std::string encodeIndexRanges(std::vector<int64_t> indices);
// Back, sorted. std::invalid_argument saying what is wrong with `text` (not a number, a range whose end
// is before its start, ranges out of order, an index below 0).
std::vector<int64_t> decodeIndexRanges(const std::string& text);

// The file's name for `rank`, "sample_ledger.rank3.csv".
std::string sampleLedgerFileName(int64_t rank);
// Every rank's ledger file in `directory`, by rank (empty when there is none).
std::map<int64_t, std::string> findSampleLedgers(const std::string& directory);

std::string sampleLedgerHeader();
std::string toCsvRow(const LedgerRow& row);  // without the line's end

// A ledger file read back. Throws std::runtime_error naming the file, line and column on anything the
// format rules out: a count out of range, indices that do not read or do not add up to `samples`, an
// index beyond the dataset, a rank other than `rank` (the file's own), a (segment, epoch, step) row
// written twice.
std::vector<LedgerRow> readSampleLedger(const std::string& path, int64_t rank);

// Rank 0's writer of every rank's file in one run directory.
class SampleLedgerWriter {
 public:
  // Opens the files of ranks 0..worldSize-1. A new run (`resuming` false) starts each with its header.
  // A resumed run first cuts every ledger file in the directory back to its rows of global steps
  // 1..resumedAtStep (each file rewritten atomically), then appends; a rank without a file gets a new
  // one. std::runtime_error naming the file when it cannot be read or written.
  SampleLedgerWriter(std::string directory, int64_t worldSize, bool resuming, int64_t resumedAtStep);

  // Whole lines of `rank`'s file, as toCsvRow makes them (each ending in '\n'); "" adds nothing.
  void append(int64_t rank, const std::string& csvRows);
  // Every file's rows to the disk; std::runtime_error when they cannot be written.
  void flush();

 private:
  std::ofstream& fileOf(int64_t rank);

  std::string directory_;
  std::map<int64_t, std::unique_ptr<std::ofstream>> files_;
};

}  // namespace dtbench::run
