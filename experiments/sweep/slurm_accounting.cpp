#include "experiments/sweep/slurm_accounting.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/lists.h"
#include "experiments/report/jobs/sacct_file.h"
#include "experiments/sweep/captured_command.h"
#include "experiments/sweep/slurm_jobs.h"
#include "run/run_facts.h"

namespace fs = std::filesystem;

namespace dtbench::sweep {
namespace {

// The job id a run directory's config.json records, or "" (off Slurm, no config.json, unreadable).
std::string jobIdOf(const fs::path& runDirectory) {
  std::vector<std::string> problems;  // a config.json that cannot be read records no job id
  return run::readConfigFile(runDirectory.string(), problems).facts.slurmJobId.value_or("");
}

constexpr int kAttempts = 20;
constexpr int kRetryMilliseconds = 500;

// Whether the sacct file at `path` (the report's reader: experiments/report/jobs/sacct_file.h) has every
// id as a job whose last attempt has ended (a requeued job's last row is its current attempt).
bool allEnded(const fs::path& path, const std::vector<std::string>& ids) {
  try {
    const report::JobTrace trace = report::readSacct(path.string(), {ids.begin(), ids.end()});
    for (const std::string& id : ids) {
      const auto job = trace.slurmJobs.find(id);
      if (job == trace.slurmJobs.end()) return false;
      const std::string& state = job->second.state;
      if (state != "COMPLETED" && state != "FAILED" && state != "CANCELLED") return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;  // half-written by sacct? ask again; the last answer is kept whatever it is
  }
}

}  // namespace

std::vector<std::string> sweepJobIds(const std::string& outDir) {
  std::set<std::string> ids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(outDir, error))
    if (entry.is_directory(error))
      if (const std::string id = jobIdOf(entry.path()); !id.empty()) ids.insert(id);
  return {ids.begin(), ids.end()};
}

std::vector<std::string> sacctCommand(const std::vector<std::string>& ids) {
  // The report's contract: its header, '|'-separated, is the --format list.
  std::string format = report::kSacctHeader;
  std::replace(format.begin(), format.end(), '|', ',');
  return {"sacct", "-a", "-D", "-X", "-S", "2000-01-01", "--parsable2", "--format=" + format,
          "-j", common::joinList(ids, ",")};
}

std::string writeSweepAccounting(const std::string& outDir, const std::vector<std::string>& ids,
                                 SweepSession& session, std::FILE* notes) {
  // Each Slurm sweep writes it anew: an earlier invocation's answer never stands for this one's.
  const std::string path = (fs::path(outDir) / "sacct.txt").string();
  std::error_code ignored;
  fs::remove(path, ignored);
  if (ids.empty()) return "";
  if (findInPath("sacct").empty()) {
    std::fprintf(notes, "dtbench sweep: sacct is not in PATH: the job table has no accounting columns\n");
    return "";
  }
  // slurmdbd hears of a job's end a moment after squeue no longer lists it: ask again, for a few
  // seconds, until every job has ended in the accounting too (the last answer is kept).
  bool written = false;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt > 0 && session.waitForSignal(kRetryMilliseconds)) break;
    const CommandResult sacct = runCaptured(sacctCommand(ids), {}, session);
    if (sacct.exitCode != 0) {
      if (written) break;
      std::fprintf(notes, "dtbench sweep: sacct failed (exit code %d: %s): the job table has no accounting columns\n",
                   sacct.exitCode, clientMessage(sacct.err.empty() ? sacct.out : sacct.err).c_str());
      return "";
    }
    common::writeFileAtomically(path, [&](std::ostream& out) { out << sacct.out; });
    written = true;
    if (allEnded(path, ids)) break;
  }
  return written ? path : "";
}

}  // namespace dtbench::sweep
