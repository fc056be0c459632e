#pragma once
// The `limits` figure of `dtbench predict --plots DIR` (docs/predict.md, "What limits scaling"): one
// stacked bar per world size of the predicted step's terms (scaling_limits.h), drawn from figures.json's
// "limits" by experiments/predict/limits_plot.py, which is built into dtbench and written into DIR
// beside the report's plots.py, whose checks and saving it uses. The report draws the other figures
// (experiments/report/figures.h); this one is drawn after them, into the same set of files.

#include <string>
#include <vector>

namespace dtbench::predict {

// Writes limits_plot.py into `directory` (where report::drawFigures has just written figures.json,
// plots.py and `drawn`), runs it with `python`, and lists its files with `drawn` as the directory's
// output set (experiments/report/output_set.h). Returns the files it drew. Throws std::runtime_error
// saying what failed.
std::vector<std::string> drawLimitsFigure(const std::string& directory, const std::string& python,
                                          const std::vector<std::string>& drawn);

// limits_plot.py as built into dtbench.
const char* limitsPlotScript();

}  // namespace dtbench::predict
