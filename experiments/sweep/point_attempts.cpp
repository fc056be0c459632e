#include "experiments/sweep/point_attempts.h"

#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>

#include "experiments/sweep/out_of_memory.h"
#include "run/run_facts.h"
#include "run/run_summary.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

constexpr size_t kErrorLength = 400;

// The point's summary.json as far as it reads (an attempt cut short may have left it damaged).
run::RunSummary readSummary(const std::string& runDirectory) {
  std::vector<std::string> problems;
  return run::readSummaryFile(runDirectory, problems);
}

std::string localTime(double unix) {
  const std::time_t t = static_cast<std::time_t>(unix);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

bool fromJobWrapper(const std::string& line) {
  return line.rfind("dtbench-job[", 0) == 0 || line.rfind("srun: ", 0) == 0 || line.rfind("slurmstepd", 0) == 0;
}

}  // namespace

std::optional<run::RunOutcome> directoryState(const std::string& runDirectory) {
  if (!fs::exists(runDirectory)) return std::nullopt;
  const std::optional<run::RunOutcome> status = readSummary(runDirectory).status;
  if (!run::isComplete(status)) return status;
  // A completed run whose config.json does not read is no result the report can take: its point runs
  // again (the damaged directory kept aside as an attempt).
  std::vector<std::string> problems;
  run::readConfigFile(runDirectory, problems);
  return problems.empty() ? status : run::RunOutcome::kFailed;
}

std::string summaryError(const std::string& runDirectory) { return readSummary(runDirectory).error.value_or(""); }

int firstFreeAttempt(const std::string& path) {
  int k = 1;
  while (fs::exists(path + ".attempt-" + std::to_string(k))) ++k;
  return k;
}

void moveAttemptAside(const std::string& path) {
  if (fs::exists(path)) fs::rename(path, path + ".attempt-" + std::to_string(firstFreeAttempt(path)));
}

PointOutcome outcomeOf(const GridPoint& point, const std::string& outDir) {
  PointOutcome outcome;
  outcome.name = point.name;
  outcome.path = (fs::path(outDir) / point.name).string();
  outcome.worldSize = point.worldSize;
  for (const auto& [key, value] : point.settings)
    outcome.configuration += (outcome.configuration.empty() ? "" : " ") + key + "=" + value;
  return outcome;
}

std::string quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    const bool plain = !word.empty() && word.find_first_of(" \t'\"$\\") == std::string::npos;
    line += plain ? word : "'" + word + "'";
  }
  return line;
}

std::string attemptHeader(const PointOutcome& outcome, const std::string& command) {
  return "==== dtbench sweep: " + outcome.name + " attempt " + std::to_string(outcome.attempt) + " at " +
         localTime(outcome.startedAt) + "\n$ " + command + "\n";
}

std::string errorFromLog(const std::string& logPath, std::streamoff offset) {
  std::ifstream in(logPath);
  in.seekg(offset);
  std::string ownError, wrapperError, lastLine;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    lastLine = line;
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("error") == std::string::npos) continue;
    (fromJobWrapper(line) ? wrapperError : ownError) = line;
  }
  std::string error = !ownError.empty() ? ownError : !wrapperError.empty() ? wrapperError : lastLine;
  if (error.size() > kErrorLength) error = error.substr(0, kErrorLength) + "...";
  return error;
}

std::string unchangingFailure(int exitCode, const std::string& logPath, std::streamoff offset,
                              const std::string& jobState) {
  if (exitCode == kUsageErrorExitCode) return "usage error";
  std::ifstream in(logPath);
  in.seekg(offset);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("dtbench: data error:", 0) == 0) return "data error";
  if (jobState == kOutOfMemoryState || outOfMemoryInLog(logPath, offset)) return kOutOfMemoryFailure;
  return "";
}

void printAttempt(std::FILE* progress, const PointOutcome& outcome, const std::string& state) {
  std::fprintf(progress, "%-40s %-20s %8.1f s  attempt %d\n", outcome.name.c_str(), state.c_str(), outcome.seconds,
               outcome.attempt);
  std::fflush(progress);
}

}  // namespace dtbench::sweep
