#pragma once
// RunOutcome: how a run stands or ended, summary.json's "status" (docs/run-directory.md,
// "summary.json"), and what each outcome means to the tools that read it. Every reader decides by
// the outcome's facts below, never by its name, so that adding an outcome is its row here and its
// line in docs/run-directory.md (docs/design.md, "Adding a run outcome").

#include <optional>
#include <string>


namespace dtbench::run {

enum class RunOutcome { kRunning, kCompleted, kInterrupted, kFailed };

// dtbench train's exit code when SIGTERM or SIGINT stopped a run at an agreed step with a checkpoint
// written (EX_TEMPFAIL): "requeue me" (slurm/lib/dtbench_job.sh requeues only on it).
inline constexpr int kRequeueExitCode = 75;

struct RunOutcomeFacts {
  RunOutcome outcome;
  const char* name;  // summary.json's "status"
  bool ended;        // the run's processes are done with it (false: still running, or killed unrecorded)
  // Did all it was asked: the report's tables take it, predict reads its step, a sweep skips its point
  // and --resume refuses to continue it.
  bool complete;
  // Stopped at an agreed step with a checkpoint written: --resume continues it, dtbench train exits
  // kRequeueExitCode and a sweep counts the point as stopped, not failed.
  bool continuable;
  int exitCode;  // dtbench train's exit code for a run that ended so (-1 while running)
};

inline constexpr RunOutcomeFacts kRunOutcomes[] = {
    {RunOutcome::kRunning, "running", false, false, false, -1},
    {RunOutcome::kCompleted, "completed", true, true, false, 0},
    {RunOutcome::kInterrupted, "interrupted", true, false, true, kRequeueExitCode},
    {RunOutcome::kFailed, "failed", true, false, false, 1},
};

const RunOutcomeFacts& factsOf(RunOutcome outcome);
// The outcome summary.json names `name`; nullopt when it names none.
std::optional<RunOutcome> findRunOutcome(const std::string& name);
// Every outcome's name, "running, completed, ..." (for messages).
std::string runOutcomeNames();
// The name of `outcome`, "unknown" for none (no summary.json, or no status in it).
std::string outcomeText(const std::optional<RunOutcome>& outcome);
// Facts of an outcome that may be unknown: an unknown run is neither complete nor continuable.
bool isComplete(const std::optional<RunOutcome>& outcome);
bool isContinuable(const std::optional<RunOutcome>& outcome);

}  // namespace dtbench::run
