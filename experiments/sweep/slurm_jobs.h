#pragma once
// What the Slurm launcher reads from and gives to Slurm's client commands (slurm_launcher.h), as
// pure functions: no process is started here.

#include <map>
#include <string>
#include <vector>

namespace dtbench::sweep {

// Splits --sbatch-args into words the way a shell would for plain words: blanks separate words;
// single quotes keep everything literally; double quotes keep blanks, and a backslash before
// `"` or `\` in them (or before any character outside quotes) keeps that character. No variables,
// globs or substitutions. Throws common::UsageError on an unclosed quote.
std::vector<std::string> splitWords(const std::string& text);

// The job id in `sbatch --parsable`'s output ("1234" or "1234;cluster"), or "" when there is none.
std::string parsableJobId(const std::string& output);

// The lines of `squeue -h -o %i,%T` as job id -> state (PENDING, RUNNING, ...); other lines are
// skipped.
std::map<std::string, std::string> parseSqueue(const std::string& output);

// True for the states of a job that has ended for good (COMPLETED, FAILED, CANCELLED, TIMEOUT,
// NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, PREEMPTED, SPECIAL_EXIT, REVOKED); false for the
// states of a job that runs or will run (PENDING, RUNNING, CONFIGURING, COMPLETING, REQUEUED,
// REQUEUE_HOLD, SUSPENDED, ...), a requeued one included.
bool jobHasEnded(const std::string& state);

// A client command's error output as one line for a message: trailing blanks and newlines dropped,
// inner newlines made blanks, cut to 400 characters ("..." added).
std::string clientMessage(std::string text);

// The value of `Field=` in one line of `scontrol -o show job` (e.g. JobState, ExitCode), or "".
std::string scontrolField(const std::string& output, const std::string& field);

}  // namespace dtbench::sweep
