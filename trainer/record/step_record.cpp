#include "trainer/record/step_record.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace dtbench::trainer {

const char* batchesCsvHeader() {
  return "rank,epoch,step,samples,data_s,h2d_s,forward_s,backward_s,comm_total_s,comm_exposed_s,"
         "optimizer_s,step_s,bytes_sent,bytes_recv";
}

namespace {

// A phase column: seconds, or an empty cell when the phase was not timed (NaN).
std::string phaseCell(double seconds) {
  if (std::isnan(seconds)) return "";
  char cell[64];
  std::snprintf(cell, sizeof cell, "%.9f", seconds);
  return cell;
}

}  // namespace

std::string toCsvRow(const StepRecord& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%.9f,%s,%s,%s,%.9f,%.9f,%s,%.9f,%lld,%lld",
                static_cast<long long>(r.rank), static_cast<long long>(r.epoch), static_cast<long long>(r.step),
                static_cast<long long>(r.samples), r.dataS, phaseCell(r.h2dS).c_str(), phaseCell(r.forwardS).c_str(),
                phaseCell(r.backwardS).c_str(), r.commTotalS, r.commExposedS, phaseCell(r.optimizerS).c_str(), r.stepS,
                static_cast<long long>(r.bytesSent), static_cast<long long>(r.bytesRecv));
  return line;
}

nlohmann::json toJson(const StepRecord& r) {
  return {r.rank, r.epoch, r.step, r.samples, r.dataS, r.h2dS, r.forwardS, r.backwardS, r.commTotalS,
          r.commExposedS, r.optimizerS, r.stepS, r.bytesSent, r.bytesRecv, r.loss, r.accuracy};
}

StepRecord stepRecordFromJson(const nlohmann::json& j) {
  StepRecord r;
  if (!j.is_array() || j.size() != 16) throw std::invalid_argument("a step record must be an array of 16 numbers");
  r.rank = j[0];
  r.epoch = j[1];
  r.step = j[2];
  r.samples = j[3];
  // A diverged step's NaN loss, and a phase that was not timed, are written to JSON as null (JSON has
  // no NaN): read them back as NaN.
  const auto numberOrNaN = [](const nlohmann::json& v) {
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
  };
  r.dataS = j[4];
  r.h2dS = numberOrNaN(j[5]);
  r.forwardS = numberOrNaN(j[6]);
  r.backwardS = numberOrNaN(j[7]);
  r.commTotalS = j[8];
  r.commExposedS = j[9];
  r.optimizerS = numberOrNaN(j[10]);
  r.stepS = j[11];
  r.bytesSent = j[12];
  r.bytesRecv = j[13];
  r.loss = numberOrNaN(j[14]);
  r.accuracy = numberOrNaN(j[15]);
  return r;
}

}  // namespace dtbench::trainer
