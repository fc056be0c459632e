#include "run/step_record.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "run/json_values.h"

namespace dtbench::run {
namespace {

constexpr int64_t kMostInt = std::numeric_limits<int>::max();

BatchColumn count(const char* name, int64_t StepRecord::*field, int64_t least, int64_t most = INT64_MAX) {
  BatchColumn c{name};
  c.count = field;
  c.least = least;
  c.most = most;
  return c;
}

BatchColumn phase(const char* name, double PhaseTimes::*field, bool mayBeUntimed) {
  BatchColumn c{name};
  c.phase = field;
  c.mayBeUntimed = mayBeUntimed;
  return c;
}

// A column added after runs were written (columns are only ever added, at the end): files written
// before it have none, and their rows read 0 in it.
BatchColumn later(BatchColumn column) {
  column.addedLater = true;
  return column;
}

// The longest time one step's field may hold: a year. Longer is no measurement (no job runs that
// long), and sums of such values would overflow to infinity.
constexpr double kLongestStepTimeS = 365.0 * 24 * 3600;

}  // namespace

const std::vector<BatchColumn>& batchColumns() {
  static const std::vector<BatchColumn> columns{
      count("rank", &StepRecord::rank, 0, kMostInt - 1),
      count("epoch", &StepRecord::epoch, 1, kMostInt),
      count("step", &StepRecord::step, 1),
      count("samples", &StepRecord::samples, 1),
      phase("data_s", &PhaseTimes::dataS, false),
      phase("h2d_s", &PhaseTimes::h2dS, true),
      phase("forward_s", &PhaseTimes::forwardS, true),
      phase("backward_s", &PhaseTimes::backwardS, true),
      phase("comm_total_s", &PhaseTimes::commTotalS, false),
      phase("comm_exposed_s", &PhaseTimes::commExposedS, false),
      phase("optimizer_s", &PhaseTimes::optimizerS, true),
      phase("step_s", &PhaseTimes::stepS, false),
      count("bytes_sent", &StepRecord::bytesSent, 0),
      count("bytes_recv", &StepRecord::bytesRecv, 0),
      later(phase("compress_s", &PhaseTimes::compressS, false)),
      later(count("grad_collectives", &StepRecord::gradCollectives, 0)),
  };
  return columns;
}

const std::vector<const BatchColumn*>& phaseColumns() {
  static const std::vector<const BatchColumn*> phases = [] {
    std::vector<const BatchColumn*> out;
    for (const BatchColumn& c : batchColumns())
      if (c.phase) out.push_back(&c);
    return out;
  }();
  return phases;
}

std::string batchesCsvHeader() {
  std::string header;
  for (const BatchColumn& c : batchColumns()) header += (header.empty() ? "" : ",") + std::string(c.name);
  return header;
}

std::string toCsvRow(const StepRecord& r) {
  std::string row;
  char cell[64];
  for (const BatchColumn& c : batchColumns()) {
    if (!row.empty()) row += ',';
    if (c.count) {
      std::snprintf(cell, sizeof cell, "%lld", static_cast<long long>(r.*c.count));
    } else if (c.mayBeUntimed && std::isnan(r.*c.phase)) {
      cell[0] = '\0';  // not timed (--phase-timing none)
    } else {
      std::snprintf(cell, sizeof cell, "%.9f", r.*c.phase);
    }
    row += cell;
  }
  return row;
}

std::vector<StepRecord> readBatchesCsv(const common::CsvFile& f) {
  constexpr size_t kAbsent = SIZE_MAX;
  std::vector<size_t> index;
  for (const BatchColumn& c : batchColumns())
    index.push_back(c.addedLater && !f.hasColumn(c.name) ? kAbsent : f.column(c.name));
  const size_t stepColumn = f.column("step_s");
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> lineOf;  // (rank, epoch, step) -> its first line
  std::vector<StepRecord> rows;
  for (size_t i = 0; i < f.rows(); ++i) {
    StepRecord r;
    for (size_t k = 0; k < batchColumns().size(); ++k) {
      const BatchColumn& c = batchColumns()[k];
      const size_t column = index[k];
      if (column == kAbsent) continue;  // the field's 0
      if (c.count) {
        const int64_t value = f.integer(i, column);
        if (value < c.least || value > c.most)
          f.fail(i, column,
                 "'" + f.text(i, column) + "' is out of range (" + std::to_string(c.least) + " to " +
                     std::to_string(c.most) + ")");
        r.*c.count = value;
        continue;
      }
      if (c.mayBeUntimed && f.text(i, column).empty()) {
        r.*c.phase = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const double value = f.number(i, column);
      if (!(std::isfinite(value) && value >= 0))
        f.fail(i, column, "'" + f.text(i, column) + "' is not a time (finite seconds, 0 or more)");
      if (value > kLongestStepTimeS)
        f.fail(i, column, "'" + f.text(i, column) + "' is not a step's time (more than a year)");
      r.*c.phase = value;
    }
    if (!(r.stepS > 0))
      f.fail(i, stepColumn, "'" + f.text(i, stepColumn) + "' is not a step time (finite seconds, more than 0)");
    // Every phase is part of its step.
    for (size_t k = 0; k < batchColumns().size(); ++k) {
      const BatchColumn& c = batchColumns()[k];
      if (c.phase && c.phase != &PhaseTimes::stepS && index[k] != kAbsent && r.*c.phase > r.stepS)
        f.fail(i, index[k],
               "'" + f.text(i, index[k]) + "' is more than the row's step_s " + f.text(i, stepColumn) +
                   " (every phase is part of its step)");
    }
    // A row written twice (a --resume racing a run that was still writing) would count its step twice.
    const auto [first, added] = lineOf.emplace(std::tuple{r.rank, r.epoch, r.step}, f.line(i));
    if (!added)
      f.fail(i, f.column("step"),
             "rank " + std::to_string(r.rank) + " epoch " + std::to_string(r.epoch) + " step " +
                 std::to_string(r.step) + " again (first at line " + std::to_string(first->second) +
                 "): duplicated rows are not measurements");
    rows.push_back(r);
  }
  return rows;
}

namespace {

// Checkpoints written until 0ad05bc held a step as 16 numbers in this order.
StepRecord fromArray(const nlohmann::json& j) {
  if (j.size() != 16) throw std::invalid_argument("a step record must be an object or an array of 16 numbers");
  StepRecord r;
  r.rank = j[0];
  r.epoch = j[1];
  r.step = j[2];
  r.samples = j[3];
  r.dataS = j[4];
  r.h2dS = numberValue(j[5]);
  r.forwardS = numberValue(j[6]);
  r.backwardS = numberValue(j[7]);
  r.commTotalS = j[8];
  r.commExposedS = j[9];
  r.optimizerS = numberValue(j[10]);
  r.stepS = j[11];
  r.bytesSent = j[12];
  r.bytesRecv = j[13];
  r.loss = numberValue(j[14]);
  r.accuracy = numberValue(j[15]);
  return r;
}

}  // namespace

nlohmann::json toJson(const StepRecord& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const BatchColumn& c : batchColumns()) {
    if (c.count)
      j[c.name] = r.*c.count;
    else
      j[c.name] = std::isnan(r.*c.phase) ? nlohmann::json(nullptr) : nlohmann::json(r.*c.phase);
  }
  j["loss"] = std::isnan(r.loss) ? nlohmann::json(nullptr) : nlohmann::json(r.loss);
  j["accuracy"] = std::isnan(r.accuracy) ? nlohmann::json(nullptr) : nlohmann::json(r.accuracy);
  return j;
}

StepRecord stepRecordFromJson(const nlohmann::json& j) {
  if (j.is_array()) return fromArray(j);
  if (!j.is_object()) throw std::invalid_argument("a step record must be an object or an array of 16 numbers");
  StepRecord r;
  for (const BatchColumn& c : batchColumns()) {
    // A phase, or a column added later, that the checkpoint was written without: 0.
    if (!j.contains(c.name) && (c.phase || c.addedLater)) continue;
    if (c.count)
      r.*c.count = j.at(c.name).get<int64_t>();
    else
      r.*c.phase = numberValue(j.at(c.name));  // null: NaN (an untimed phase, a diverged loss)
  }
  r.loss = numberValue(j.at("loss"));
  r.accuracy = numberValue(j.at("accuracy"));
  return r;
}

}  // namespace dtbench::run
