#pragma once
// A cluster trace in the Helios layout as dtbench report reads it (--trace FILE; docs/report.md,
// "Job traces"): a CSV whose header names the columns
//
//   job_id,user,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
//
// in any order, with other columns ignored. job_id, gpu_num, state, submit_time, start_time and
// end_time are required; duration (seconds) is optional and end_time − start_time stands in for it
// when absent or empty. Times are `YYYY-MM-DD HH:MM:SS` (local time, see job_clock.h) or Unix
// seconds. One row is one job with one attempt. Other traces (Philly, PAI, ...) name the columns
// otherwise: a column map renames them (`gpu_num=num_gpus,submit_time=submitted_time`: the Helios
// name, '=', the file's name). The file is read line by line: memory grows with its GPU jobs only.

#include <map>
#include <string>

#include "experiments/report/jobs/job_trace.h"

namespace dtbench::report {

// Helios name -> the file's name. Parsed from "helios=theirs,..."; throws std::invalid_argument
// for a name the Helios layout does not have or an item without '='.
using TraceColumnMap = std::map<std::string, std::string>;
TraceColumnMap parseTraceColumnMap(const std::string& text);

// Reads `path`. Throws std::runtime_error naming the file and the line for a header lacking a
// required column, a row with another number of fields than the header, an unparsable time,
// GPUs that are negative or not a whole number, a negative duration, and says when the last line is
// cut short.
JobTrace readTrace(const std::string& path, const TraceColumnMap& columns);

}  // namespace dtbench::report
