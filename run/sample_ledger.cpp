#include "run/sample_ledger.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/csv_file.h"

namespace dtbench::run {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLedgerColumns =
    "segment,world_size,rank,epoch,step,global_step,dataset_size,batch_size,epoch_steps,drop_last,seed,samples,"
    "indices";

// One whole number of a range ("12" of "12-15"); std::invalid_argument naming `text` otherwise.
int64_t ledgerIndexValue(const std::string& number, const std::string& text) {
  size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || number[0] == '-' || number[0] == '+')
    throw std::invalid_argument("'" + text + "' is not a list of index ranges such as 3-7;12;40-41 ('" + number +
                                "' is not an index)");
  return value;
}

}  // namespace

std::string encodeIndexRanges(std::vector<int64_t> indices) {
  std::sort(indices.begin(), indices.end());
  std::string text;
  char cell[48];
  for (size_t i = 0; i < indices.size();) {
    // A range runs while each index is one more than the one before; a repeated index starts the next.
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (j == i)
      std::snprintf(cell, sizeof cell, "%" PRId64, indices[i]);
    else
      std::snprintf(cell, sizeof cell, "%" PRId64 "-%" PRId64, indices[i], indices[j]);
    if (!text.empty()) text += ';';
    text += cell;
    i = j + 1;
  }
  return text;
}

std::vector<int64_t> decodeIndexRanges(const std::string& text) {
  std::vector<int64_t> indices;
  if (text.empty()) return indices;
  std::stringstream in(text);
  std::string part;
  int64_t previousLast = -1;
  while (std::getline(in, part, ';')) {
    const size_t dash = part.find('-');
    const int64_t first = ledgerIndexValue(part.substr(0, dash), text);
    const int64_t last = dash == std::string::npos ? first : ledgerIndexValue(part.substr(dash + 1), text);
    if (last < first)
      throw std::invalid_argument("'" + text + "': the range " + part + " ends before it starts");
    // Sorted: a range starts after the one before ends, or on its last index (a repeated index).
    if (first < previousLast)
      throw std::invalid_argument("'" + text + "': the range " + part + " comes after a range that ends at " +
                                  std::to_string(previousLast) + " (the ranges are written sorted)");
    for (int64_t i = first; i <= last; ++i) indices.push_back(i);
    previousLast = last;
  }
  if (text.back() == ';') throw std::invalid_argument("'" + text + "' ends in ';'");
  return indices;
}

std::string sampleLedgerFileName(int64_t rank) { return "sample_ledger.rank" + std::to_string(rank) + ".csv"; }

std::map<int64_t, std::string> findSampleLedgers(const std::string& directory) {
  static const std::regex name(R"(sample_ledger\.rank(0|[1-9][0-9]{0,8})\.csv)");
  std::map<int64_t, std::string> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, match, name)) files[std::stoll(match[1].str())] = entry.path().string();
  }
  return files;
}

std::string sampleLedgerHeader() { return kLedgerColumns; }

std::string toCsvRow(const LedgerRow& r) {
  char head[320];
  std::snprintf(head, sizeof head,
                "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                ",%" PRId64 ",%d,%" PRIu64 ",%zu,",
                r.segment, r.worldSize, r.rank, r.epoch, r.step, r.globalStep, r.datasetSize, r.batchSize,
                r.epochSteps, r.dropLast ? 1 : 0, r.seed, r.indices.size());
  return head + encodeIndexRanges(r.indices);
}

std::vector<LedgerRow> readSampleLedger(const std::string& path, int64_t rank) {
  const common::CsvFile f = common::CsvFile::read(path);
  constexpr int64_t kMost = std::numeric_limits<int>::max();
  const auto count = [&f](size_t row, const char* name, int64_t least, int64_t most) {
    const size_t column = f.column(name);
    const int64_t value = f.integer(row, column);
    if (value < least || value > most)
      f.fail(row, column, "'" + f.text(row, column) + "' is out of range (" + std::to_string(least) + " to " +
                              std::to_string(most) + ")");
    return value;
  };
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> lineOf;  // (segment, epoch, step) -> its first line
  std::vector<LedgerRow> rows;
  for (size_t i = 0; i < f.rows(); ++i) {
    LedgerRow r;
    r.segment = count(i, "segment", 0, kMost);
    r.worldSize = count(i, "world_size", 1, kMost);
    r.rank = count(i, "rank", 0, r.worldSize - 1);
    if (r.rank != rank)
      f.fail(i, f.column("rank"), "rank " + std::to_string(r.rank) + " in the ledger of rank " + std::to_string(rank));
    r.epoch = count(i, "epoch", 1, kMost);
    r.step = count(i, "step", 1, INT64_MAX);
    r.globalStep = count(i, "global_step", r.step, INT64_MAX);
    r.datasetSize = count(i, "dataset_size", 1, INT64_MAX);
    r.batchSize = count(i, "batch_size", 1, INT64_MAX);
    r.epochSteps = count(i, "epoch_steps", 1, INT64_MAX);
    if (r.step > r.epochSteps)
      f.fail(i, f.column("step"), "step " + std::to_string(r.step) + " of an epoch of " + std::to_string(r.epochSteps) +
                                      " steps (epoch_steps)");
    r.dropLast = count(i, "drop_last", 0, 1) == 1;
    const size_t seedColumn = f.column("seed");
    const std::string& seed = f.text(i, seedColumn);
    char* end = nullptr;
    r.seed = std::strtoull(seed.c_str(), &end, 10);
    if (seed.empty() || seed[0] == '-' || *end != '\0') f.fail(i, seedColumn, "'" + seed + "' is not a seed");
    const int64_t samples = count(i, "samples", 1, r.batchSize);
    const size_t indicesColumn = f.column("indices");
    try {
      r.indices = decodeIndexRanges(f.text(i, indicesColumn));
    } catch (const std::invalid_argument& e) {
      f.fail(i, indicesColumn, e.what());
    }
    if (static_cast<int64_t>(r.indices.size()) != samples)
      f.fail(i, indicesColumn, "the ranges hold " + std::to_string(r.indices.size()) + " indices, the row's samples " +
                                   std::to_string(samples));
    if (r.indices.back() >= r.datasetSize)
      f.fail(i, indicesColumn, "index " + std::to_string(r.indices.back()) + " is beyond the dataset's " +
                                   std::to_string(r.datasetSize) + " samples");
    const auto [first, added] = lineOf.emplace(std::tuple{r.segment, r.epoch, r.step}, f.line(i));
    if (!added)
      f.fail(i, f.column("step"), "segment " + std::to_string(r.segment) + " epoch " + std::to_string(r.epoch) +
                                      " step " + std::to_string(r.step) + " again (first at line " +
                                      std::to_string(first->second) + ")");
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {

// `path` cut back to its header and the whole rows of global steps 1..keptSteps (a --resume trains the
// later ones again), rewritten atomically. A last line without its end was being written when the run
// stopped, after the checkpoint's flush: it goes too.
void cutLedgerAfter(const std::string& path, int64_t keptSteps) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("--resume: cannot read " + path);
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  std::string kept;
  size_t globalColumn = std::string::npos;
  size_t lineNumber = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // unfinished
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lineNumber;
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (lineNumber == 1) {
      const auto at = std::find(cells.begin(), cells.end(), "global_step");
      if (at == cells.end())
        throw std::runtime_error("--resume: " + path + " is not a sample ledger (its header has no global_step); "
                                 "restore it or remove it");
      globalColumn = static_cast<size_t>(at - cells.begin());
      kept += line + '\n';
      continue;
    }
    char* after = nullptr;
    const std::string cell = globalColumn < cells.size() ? cells[globalColumn] : "";
    const long long step = std::strtoll(cell.c_str(), &after, 10);
    if (cell.empty() || *after != '\0')
      throw std::runtime_error("--resume: " + path + " line " + std::to_string(lineNumber) + ": global_step '" + cell +
                               "' is not a step; the ledger was changed after the run wrote it");
    if (step <= keptSteps) kept += line + '\n';
  }
  if (kept.empty()) kept = sampleLedgerHeader() + '\n';  // the run died before it wrote the header
  common::writeFileAtomically(path, [&](std::ostream& out) { out << kept; });
}

}  // namespace

SampleLedgerWriter::SampleLedgerWriter(std::string directory, int64_t worldSize, bool resuming, int64_t resumedAtStep)
    : directory_(std::move(directory)) {
  if (resuming)
    for (const auto& [rank, path] : findSampleLedgers(directory_)) cutLedgerAfter(path, resumedAtStep);
  for (int64_t rank = 0; rank < worldSize; ++rank) {
    const fs::path path = fs::path(directory_) / sampleLedgerFileName(rank);
    const bool appending = resuming && fs::exists(path);
    auto out = std::make_unique<std::ofstream>(path, appending ? std::ios::out | std::ios::app
                                                               : std::ios::out | std::ios::trunc);
    if (!*out) throw std::runtime_error("cannot write " + path.string() + ": choose a writable --out");
    if (!appending) *out << sampleLedgerHeader() << '\n';
    out->flush();
    files_[rank] = std::move(out);
  }
}

std::ofstream& SampleLedgerWriter::fileOf(int64_t rank) {
  const auto at = files_.find(rank);
  if (at == files_.end())
    throw std::logic_error("sample ledger rows of rank " + std::to_string(rank) + ", beyond the run's " +
                           std::to_string(files_.size()) + " ranks");
  return *at->second;
}

void SampleLedgerWriter::append(int64_t rank, const std::string& csvRows) {
  if (!csvRows.empty()) fileOf(rank) << csvRows;
}

void SampleLedgerWriter::flush() {
  for (auto& [rank, out] : files_) {
    out->flush();
    if (!*out)
      throw std::runtime_error("cannot write " + (fs::path(directory_) / sampleLedgerFileName(rank)).string() +
                               ": is the disk full or the directory gone?");
  }
}

}  // namespace dtbench::run
