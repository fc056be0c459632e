#include "experiments/predict/calibration_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtbench::predict {

ErrorSummary summarize(const std::vector<CalibrationRow>& rows) {
  ErrorSummary e;
  for (const CalibrationRow& r : rows) {
    const double error = std::abs(r.predictedS / r.measured.seconds - 1);
    ++e.rows;
    e.mean += error;
    e.worst = std::max(e.worst, error);
    if (r.measured.bytes >= kLargeBytes) {
      ++e.largeRows;
      e.largeMean += error;
      e.largeWorst = std::max(e.largeWorst, error);
    }
  }
  if (e.rows > 0) e.mean /= static_cast<double>(e.rows);
  if (e.largeRows > 0) e.largeMean /= static_cast<double>(e.largeRows);
  return e;
}

report::Table comparisonTable(const std::vector<CalibrationRow>& rows, const ErrorSummary& e,
                              const char* title) {
  report::Table table;
  table.name = "allreduce_model";
  table.title = title;
  table.columns = {"row", "class", "backend", "topology", "N", "nodes", "size", "measured_s", "predicted_s", "error"};
  for (const CalibrationRow& r : rows)
    table.rows.push_back({report::Cell::of(r.measured.source), report::Cell::of(r.linkClass),
                          report::Cell::of(r.measured.backend), report::Cell::of(r.measured.topology),
                          report::Cell::integral(r.measured.world), report::Cell::integral(r.measured.nodes),
                          report::Cell::integral(r.measured.bytes), report::Cell::seconds(r.measured.seconds),
                          report::Cell::seconds(r.predictedS), report::Cell::ratio(r.predictedS / r.measured.seconds - 1)});
  char text[256];
  std::snprintf(text, sizeof text, "- Over %zu rows: mean |error| %.1f%%, worst %.1f%%; from 1 MiB (%zu rows): "
                "mean %.1f%%, worst %.1f%%.", e.rows, 100 * e.mean, 100 * e.worst, e.largeRows, 100 * e.largeMean,
                100 * e.largeWorst);
  table.notes.push_back(text);
  table.notes.push_back("- `error` = predicted / measured − 1.");
  return table;
}

}  // namespace dtbench::predict
