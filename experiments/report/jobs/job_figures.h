#pragma once
// The job traces' figures (docs/report.md, "Figures"): the data behind trace_duration_cdf,
// trace_queue_delay_cdf, trace_final_states and trace_gpu_time_by_size as figures.json's "traces"
// list, one entry per trace, drawn by plots.py with every trace on the same axes.

#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/jobs/job_trace.h"

namespace dtbench::report {

// Per trace with GPU jobs: {name, kind, duration: {x_s, jobs_share, gpu_time_share}, queue: {x_s,
// jobs_share}, sizes: [...], states: [{state, jobs: [per size], gpu_hours: [per size]}]} with the
// CDFs at 20 points per decade and sizes "all", "1", "2-4", "5-8", ">8".
nlohmann::json traceFigureData(const std::vector<JobTrace>& traces);

}  // namespace dtbench::report
