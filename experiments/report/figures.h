#pragma once
// Figures of dtbench report (--plots DIR, docs/report.md "Figures"): the data behind every figure
// as one JSON document (kept as DIR/figures.json), drawn by experiments/report/plots.py, which is
// built into dtbench and written next to it as DIR/plots.py so the figures can be redrawn or
// restyled without dtbench.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_selection.h"
#include "experiments/report/runs/scaling_tables.h"

namespace dtbench::report {

// The figures' data (plots.py's input schema).
nlohmann::json figureData(const std::vector<RunData>& runs, const RunSelection& selection,
                          const std::vector<ScalingRow>& rows, std::optional<int> epoch);

// Writes figures.json and plots.py into `directory` (created) and runs plots.py with `python`
// (Debian's /usr/bin/python3 with python3-matplotlib). Returns the files it drew. The directory's
// figures are replaced as a set (output_set.h): a figure an earlier report drew there and this one
// did not is removed. Throws std::runtime_error saying what to install or fix when drawing fails.
std::vector<std::string> drawFigures(const nlohmann::json& data, const std::string& directory,
                                     const std::string& python);

// Runs a figure script (`python SCRIPT DIR/figures.json DIR`), which prints each file it draws on a line
// of its own; returns those files. Throws std::runtime_error naming the script and its exit status, then
// `hint` (what to check), when it fails.
std::vector<std::string> runFigureScript(const std::string& python, const std::string& script,
                                         const std::string& directory, const std::string& hint = "");

// plots.py as built into dtbench.
const char* plotsScript();

}  // namespace dtbench::report
