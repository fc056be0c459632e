#pragma once
// What Slurm's accounting recorded for a sweep's jobs (docs/sweep.md, "Accounting"): after a
// `--launcher slurm` sweep, DIR/sacct.txt, the input of the report's --sacct, so that the job table
// gains each point's job ids, queue wait, requeues and final state, and the cost table the time to
// result.
//
// Contract
//   sweepJobIds(outDir)   the `slurm_job_id` of every run directory's config.json under outDir (every
//                         point's attempts included), sorted, without duplicates.
//   sacctCommand(ids)     the report's documented sacct command (experiments/report/jobs/sacct_file.h:
//                         `-a -D -X -S <start> --parsable2 --format=<its header's fields>`) for those
//                         jobs, `-j <ids>`; the start is 2000-01-01, since -j alone keeps sacct's
//                         default window (today from midnight).
//   writeSweepAccounting(outDir, ids, session, notes)
//                         removes an earlier DIR/sacct.txt, runs the command and writes its answer
//                         there (common::writeFileAtomically), asking again for up to 10 s until
//                         every job has ended in the accounting; returns the path. Returns "" (and
//                         leaves no file) and says why on `notes` when there are no ids, sacct is not
//                         in PATH, or it fails (a Slurm without accounting: "accounting storage is
//                         disabled"); a sweep never fails for want of accounting.

#include <cstdio>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_session.h"

namespace dtbench::sweep {

std::vector<std::string> sweepJobIds(const std::string& outDir);
std::vector<std::string> sacctCommand(const std::vector<std::string>& ids);
std::string writeSweepAccounting(const std::string& outDir, const std::vector<std::string>& ids,
                                 SweepSession& session, std::FILE* notes);

}  // namespace dtbench::sweep
