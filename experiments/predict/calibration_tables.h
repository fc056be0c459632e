#pragma once
// The tables of `dtbench predict --calibrate` and `--allreduce` (docs/predict.md, "Calibration"):
// measured all-reduces beside the model's time on a hardware file, and the error over them.

#include <cstddef>
#include <vector>

#include "experiments/predict/calibration.h"
#include "experiments/report/report_table.h"

namespace dtbench::predict {

// |predicted / measured − 1| over rows, and over those from kLargeBytes.
struct ErrorSummary {
  size_t rows = 0, largeRows = 0;
  double mean = 0, worst = 0, largeMean = 0, largeWorst = 0;
};

ErrorSummary summarize(const std::vector<CalibrationRow>& rows);

// Measured rows beside the model's predictions on a hardware file: the calibration's fit, or a
// validation (--allreduce). The notes give `e` and define the error column.
report::Table comparisonTable(const std::vector<CalibrationRow>& rows, const ErrorSummary& e, const char* title);

}  // namespace dtbench::predict
