#pragma once
// Every table `dtbench predict` prints, by the mode that prints it (docs/predict.md): the names
// --table takes, its --help lists and its parse checks, so that a table added to predict is named in
// one place. The tables' builders (prediction_tables.h, rate_axis_tables.h, calibration_tables.h, the
// calibration's own) give their tables these names; tests hold the two lists equal.

#include <string>
#include <vector>

namespace dtbench::predict {

// What one predict command does, and so which tables it has.
enum class PredictMode {
  kPrediction,  // RUN --hardware FILE --world ...: the assumed, Tables 1-3, breakdown, limits, inputs
  kVary,        // ... --vary KEY=V1,V2,...: the axis and its crossings
  kAllreduce,   // --allreduce CSV --hardware FILE: measured all-reduces beside the model's
  kCalibrate,   // --calibrate CSV: the fit's own rows
};

struct PredictTableName {
  std::string name;  // report::Table::name
  PredictMode mode;
};

// Every table, in the order each mode prints them.
const std::vector<PredictTableName>& predictTableNames();

// The names of `mode`'s tables, in their order.
std::vector<std::string> predictTableNames(PredictMode mode);

// Whether `name` is a table of any mode.
bool isPredictTable(const std::string& name);

// The option that selects `mode` ("--vary", "--allreduce", "--calibrate"; "" for a plain prediction).
const char* predictModeFlag(PredictMode mode);

// One line of every mode's tables, e.g. "assumed, time_speedup, ...; with --vary rate_axis, crossings; ...".
std::string describePredictTables();

}  // namespace dtbench::predict
