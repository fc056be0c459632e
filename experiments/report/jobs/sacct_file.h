#pragma once
// The output of sacct as dtbench report reads it (--sacct FILE; docs/report.md, "The sacct
// contract"): exactly
//
//   sacct -a -D -X -S <start> --parsable2
//         --format=JobID,JobName,User,Partition,State,ExitCode,Submit,Start,End,ElapsedRaw,NNodes,AllocTRES
//
// '|'-separated, the header first. -X: one row per job allocation (no steps); -D: every attempt of a
// requeued job is a row of its own with the same JobID (the earlier ones REQUEUED). A job's rows
// become one job: its duration and GPU time are the sums over its attempts, its GPUs and state the
// last attempt's, its queueing delay the first start − the first submit. GPUs = AllocTRES's
// `gres/gpu=N`, else the sum of its `gres/gpu:TYPE=N`, else 0. Array tasks (`1234_5`) and
// heterogeneous components (`1234+0`) are jobs of their own, named as sacct prints them.

#include <set>
#include <string>

#include "experiments/report/jobs/job_trace.h"

namespace dtbench::report {

// The header --parsable2 writes for the contract's --format.
extern const char kSacctHeader[];

// Reads `path`, line by line: the trace's tables need 32 bytes per GPU job (job_trace.h), and the
// join (JobTrace::slurmJobs) is kept for the jobs named in `joinIds` only (the run directories' or a
// sweep's job ids), so a million jobs take tens of MB. Throws std::runtime_error naming the file and
// the line for a header other than kSacctHeader, a row with another number of fields, an unparsable
// time, End before Start, ElapsedRaw or NNodes that is not a count, negative GPUs or a malformed
// AllocTRES, and says when the last line is cut short.
JobTrace readSacct(const std::string& path, const std::set<std::string>& joinIds);

}  // namespace dtbench::report
