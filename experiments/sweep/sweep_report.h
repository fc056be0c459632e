#pragma once
// The outputs of a sweep (docs/sweep.md): DIR/jobs.csv (the job table as CSV) and DIR/report.md
// (every table of dtbench report), built in-process with the report library from the run
// directories under DIR, attempts included. A point whose last attempt left no run (it failed
// before writing config.json, e.g. an unknown model) gets a job row of its own from its outcome,
// with its state and error, so every failure shows in the job table. A run whose summary.json still
// says `running` while no process holds its lock died without recording its end: its row says
// `failed`, with that and the point's reason (Note [A run that died without recording its end]).

#include <string>
#include <vector>

#include "experiments/sweep/sweep_runner.h"

namespace dtbench::sweep {

// Writes both files and returns Tables 1-3 (time_speedup, compute_comm, bandwidth) as Markdown, or
// a line saying why there are none. With `sacctFile` (a Slurm sweep's DIR/sacct.txt,
// slurm_accounting.h) the job table and the cost table gain the accounting's columns (the report's
// --sacct). Throws std::runtime_error when a file cannot be written.
std::string writeSweepReport(const std::string& outDir, const std::vector<PointOutcome>& outcomes,
                             const std::string& sacctFile = "");

}  // namespace dtbench::sweep
