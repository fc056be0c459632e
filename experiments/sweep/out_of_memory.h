#pragma once
// Out-of-memory kills of a sweep's attempts (docs/sweep.md, "Running, skipping, retrying"): the
// kernel's out-of-memory killer would end the same point with the same settings again, so such an
// attempt is not retried, and the point fails with what to change.
//
// Contract:
//  - The local launcher's points, and their ranks, run in the sweep's cgroup, so a point whose child ended
//    by SIGKILL (dtbench launch: exit code 137) while the cgroup's "oom_kill" counter rose
//    (common/oom_kills.h) was ended by that killer.
//  - outOfMemoryInLog(logPath, offset): true when the attempt's log from `offset` names an
//    out-of-memory kill: dtbench launch's "rank R was killed by the kernel's out-of-memory killer",
//    or slurmstepd's "Detected N oom_kill event(s)" (older Slurm: "oom-kill event(s)").
//  - kOutOfMemoryState: Slurm's JobState of a job its cgroup's limit ended.

#include <iosfwd>
#include <optional>
#include <string>

namespace dtbench::sweep {

inline constexpr const char* kOutOfMemoryState = "OUT_OF_MEMORY";

// What an out-of-memory failure says after its cause: what to change for another attempt.
inline constexpr const char* kOutOfMemoryHint =
    "the same settings would be killed again: lower --batch-size (or --workers, or the ranks per machine), or give "
    "the point more memory (--sbatch-args --mem=... under Slurm)";

bool outOfMemoryInLog(const std::string& logPath, std::streamoff offset);

}  // namespace dtbench::sweep
