#pragma once
// Cost and best configuration (docs/report.md): per Table 1 row the epoch's wall time, GPU-hours,
// with a price the cost per epoch and per million images, and the spread of per-step throughput;
// then per world size the fastest and (with a price) the cheapest configuration.

#include <optional>
#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/scaling_tables.h"

namespace dtbench::report {

Table costTable(const std::vector<ScalingRow>& rows, std::optional<double> gpuHourPrice);
Table bestConfigurationTable(const std::vector<ScalingRow>& rows, std::optional<double> gpuHourPrice);

}  // namespace dtbench::report
