#pragma once
// Normalised job states (docs/report.md, "Job traces: states"). Cluster traces and sacct name a
// job's end in many words; the studies of GPU clusters (Philly, Helios, PAI, Seren, Kalos) group
// them into three final states, and so does dtbench report:
//
//   COMPLETED  COMPLETED, Pass, Passed, Succeeded, Success, Terminated (PAI)
//   FAILED     FAILED, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, TIMEOUT, SPECIAL_EXIT, Failed
//   CANCELLED  CANCELLED, CANCELLED by N, PREEMPTED, REVOKED, Killed (Philly)
//
// TIMEOUT is FAILED: the job ran out of its time limit without producing its result, the scheduler
// ended it, and its GPU time was spent for nothing (Philly's "unsuccessful": neither finished nor
// killed by a user). PREEMPTED is CANCELLED: the job was ended from outside, not by a fault of its own.
// REQUEUED is an intermediate attempt of a job that runs again; RUNNING, PENDING, SUSPENDED,
// RESIZING, REQUEUE_HOLD, REQUEUE_FED, STOPPED, SIGNALING, STAGE_OUT, Waiting and Running have not
// ended. Anything else is unknown. Matching ignores case and what follows the first space.

#include <string>

namespace dtbench::report {

enum class JobState { kCompleted, kFailed, kCancelled, kRequeued, kUnfinished, kUnknown };

// The three final states, in the order the tables list them.
constexpr JobState kFinalStates[] = {JobState::kCompleted, JobState::kFailed, JobState::kCancelled};

JobState normaliseState(const std::string& raw);

// COMPLETED, FAILED, CANCELLED, REQUEUED, UNFINISHED or UNKNOWN.
const char* stateName(JobState state);

bool isFinal(JobState state);

}  // namespace dtbench::report
