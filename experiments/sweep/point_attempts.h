#pragma once
// The attempts of one sweep point in its directory (docs/sweep.md, "Running, skipping, retrying"),
// the rules every launcher shares:
//  - DIR/<name> holds the point's current attempt; its summary.json's outcome is its state.
//  - Earlier attempts are kept as DIR/<name>.attempt-K, K = 1, 2, ...; nothing is ever deleted.
//    The attempt in DIR/<name> after K kept ones is attempt K + 1.
//  - DIR/<name>.log collects the output of every attempt, each after a header line
//    "==== dtbench sweep: <name> attempt K at <time>" and the command.
//  - An attempt that fails the same way every time is not retried (unchangingFailure): a usage
//    error (exit kUsageErrorExitCode, a bad value in the command), a data error (a dataset that
//    is missing or damaged: "dtbench: data error:" in its log) or an out-of-memory kill
//    (out_of_memory.h: the kernel's killer would end the same settings again).

#include <cstdio>
#include <ios>
#include <optional>
#include <string>
#include <vector>

#include "common/usage_error.h"
#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_runner.h"
#include "run/run_outcome.h"

namespace dtbench::sweep {

using common::kUsageErrorExitCode;

// The outcome summary.json records for a point's directory (run/run_summary.h); nullopt when the
// directory does not exist or has no readable one. A completed run whose config.json does not read
// (damaged, cut short) is kFailed: not a result, so its point runs again.
std::optional<run::RunOutcome> directoryState(const std::string& runDirectory);

// summary.json's "error", or "" when there is none.
std::string summaryError(const std::string& runDirectory);

// The K of the first DIR/<name>.attempt-K that does not exist, i.e. the number of the next attempt.
int firstFreeAttempt(const std::string& path);

// Renames an existing `path` to the first free path.attempt-K; does nothing when it does not exist.
void moveAttemptAside(const std::string& path);

// An outcome for `point` in `outDir` with its name, path, world size and configuration filled in.
PointOutcome outcomeOf(const GridPoint& point, const std::string& outDir);

// The words of a command as one line a shell would read back.
std::string quoted(const std::vector<std::string>& words);

// The line that opens an attempt in its log: the header with the time `startedAt`, then "$ command".
std::string attemptHeader(const PointOutcome& outcome, const std::string& command);

// The error of a failed attempt from its log, read from `offset`: the last line that mentions an
// error and does not come from the job wrappers (dtbench-job, srun, slurmstepd), else the last such
// line from them, else the last non-empty line; cut to a few hundred characters.
std::string errorFromLog(const std::string& logPath, std::streamoff offset);

// "usage error" when the attempt exited kUsageErrorExitCode, "data error" when its log from
// `offset` holds dtbench's "dtbench: data error:" line, "out of memory" when that log names an
// out-of-memory kill (outOfMemoryInLog) or Slurm's `jobState` is OUT_OF_MEMORY, else "": the
// failures another attempt would repeat, which are not retried.
std::string unchangingFailure(int exitCode, const std::string& logPath, std::streamoff offset,
                              const std::string& jobState = "");

inline constexpr const char* kOutOfMemoryFailure = "out of memory";

// The most --retries takes: a point fails for a reason that may pass (a killed rank, a node that
// failed) a few times at most; more retries only repeat a failure.
inline constexpr int kMostRetries = 10;

// The progress line of a finished attempt: name, what became of it ("completed", "failed (retrying)",
// ...), seconds, attempt.
void printAttempt(std::FILE* progress, const PointOutcome& outcome, const std::string& state);

}  // namespace dtbench::sweep
