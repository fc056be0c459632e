#include "experiments/sweep/slurm_launcher.h"

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>

#include "common/cluster_file.h"
#include "common/clock.h"
#include "common/lists.h"
#include "experiments/sweep/captured_command.h"
#include "experiments/sweep/out_of_memory.h"
#include "experiments/sweep/point_attempts.h"
#include "experiments/sweep/slurm_accounting.h"
#include "common/usage_error.h"
#include "experiments/sweep/slurm_jobs.h"
#include "run/checkpoint_folder.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

constexpr int kQueuePollMilliseconds = 2000;
constexpr int kSqueueWarningEvery = 30;  // polls between two warnings while squeue keeps failing
constexpr double kCancelDeadlineSeconds = 30;  // how long cancelling waits for its jobs to leave the queue
constexpr int kCancelPollMilliseconds = 500;

// True when the point's ranks use GPUs: the train flags, the point's last, ask for `--device
// cuda...`, or, for a point on nodes, name no device (train_multinode.sbatch then adds --device cuda).
bool wantsCuda(const GridPoint& point, const SweepSettings& settings) {
  std::vector<std::string> flags = settings.trainFlags;
  flags.insert(flags.end(), point.trainFlags.begin(), point.trainFlags.end());
  std::string device;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "--device" && i + 1 < flags.size()) device = flags[i + 1];
    else if (flags[i].rfind("--device=", 0) == 0) device = flags[i].substr(9);
  }
  if (device.empty()) return point.nodes > 0;
  return device.rfind("cuda", 0) == 0;
}

// Slurm's ExitCode "E:S" as one exit code: E, or 128 + S when a signal S ended the job.
int slurmExitCodeOf(const std::string& slurmExitCode) {
  const size_t colon = slurmExitCode.find(':');
  try {
    const int signal = colon == std::string::npos ? 0 : std::stoi(slurmExitCode.substr(colon + 1));
    return signal != 0 ? 128 + signal : std::stoi(slurmExitCode.substr(0, colon));
  } catch (const std::exception&) {
    return 0;
  }
}

// The CPUs a task asks for in sbatch's words (--cpus-per-task=C, --cpus-per-task C, -c C, -cC; the last
// one counts), else 1.
int cpusPerTaskIn(const std::vector<std::string>& words) {
  std::string value;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "--cpus-per-task" || w == "-c") && i + 1 < words.size()) value = words[i + 1];
    else if (w.rfind("--cpus-per-task=", 0) == 0) value = w.substr(16);
    else if (w.size() > 2 && w.rfind("-c", 0) == 0 && w[2] != '-') value = w.substr(2);
  }
  if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos) return 1;
  return std::max(1, std::stoi(value));
}

}  // namespace

void checkMinNodes(int minNodes, const Grid& grid) {
  if (minNodes < 1)
    throw common::UsageError("--min-nodes must be at least 1 (the fewest nodes a point's job may run on), got " +
                             std::to_string(minNodes));
  if (!hasAxis(grid, "nodes"))
    throw common::UsageError("--min-nodes is the low end of a node range for the points of a nodes axis; add --grid "
                             "nodes=M1,M2 (with --ranks-per-node K), or drop --min-nodes");
}

std::string slurmScript(const GridPoint& point, const SweepSettings& settings) {
  if (!settings.slurm.gpuType.empty() && !(settings.slurm.script.empty() && wantsCuda(point, settings)))
    throw common::UsageError(
        "--gpu-type types the GPUs that the default GPU job scripts ask for, but point " + point.name +
        (settings.slurm.script.empty() ? " runs on the CPU: give --device cuda after --, or drop --gpu-type"
                                       : " runs --slurm-script: put the type in its #SBATCH --gres or in --sbatch-args"));
  if (!settings.slurm.script.empty()) {
    if (!fs::is_regular_file(settings.slurm.script))
      throw common::UsageError("--slurm-script " + settings.slurm.script +
                                " is not a file; give an sbatch job script such as slurm/train_cpu.sbatch");
    return fs::absolute(settings.slurm.script).lexically_normal().string();
  }
  const std::string name = point.nodes > 0             ? "train_multinode.sbatch"
                           : wantsCuda(point, settings) ? "train_gpus.sbatch"
                                                        : "train_cpu.sbatch";
  const fs::path path = fs::path(settings.slurm.scriptDirectory) / name;
  if (!fs::is_regular_file(path))
    throw common::UsageError("the Slurm job script " + path.string() +
                              " does not exist; set DTBENCH_SLURM_DIR to the slurm/ folder of the dtbench "
                              "sources, or give --slurm-script FILE");
  return fs::absolute(path).lexically_normal().string();
}

bool pointsRunOneAtATime(const SlurmSettings& settings) {
  const char* cluster = std::getenv(common::kClusterVariable);
  return !settings.allowOverlap && cluster != nullptr && *cluster != '\0';
}

SbatchSubmission sbatchSubmission(const GridPoint& point, const SweepSettings& settings, const std::string& after) {
  const std::string script = slurmScript(point, settings);
  const std::string runs = fs::absolute(settings.outDir).lexically_normal().string();
  const std::string world = std::to_string(point.worldSize);
  SbatchSubmission submission;
  submission.environment = {{"DTBENCH", settings.executable}, {"RUNS", runs}, {"RUN_NAME", point.name}};
  std::vector<std::string>& command = submission.command;
  command = {"sbatch", "--parsable", "--job-name=" + point.name};
  // On nodes: M nodes with K ranks each. --ntasks is given too, so that a job script's own
  // `#SBATCH --ntasks` (e.g. train_cpu.sbatch's through --slurm-script) cannot change the world.
  // A node range (--min-nodes) gives no task count at all: the job script counts K ranks a node.
  const std::string perNode = point.nodes > 0 ? std::to_string(point.worldSize / point.nodes) : world;
  const bool range = point.nodes > 0 && settings.slurm.minNodes > 0 && settings.slurm.minNodes < point.nodes;
  if (point.nodes > 0) submission.environment.emplace_back("DTBENCH_TASKS_PER_NODE", perNode);
  if (range) {
    command.push_back("--nodes=" + std::to_string(settings.slurm.minNodes) + "-" + std::to_string(point.nodes));
  } else {
    if (point.nodes > 0) command.push_back("--nodes=" + std::to_string(point.nodes));
    command.push_back("--ntasks=" + world);
    if (point.nodes > 0) command.push_back("--ntasks-per-node=" + perNode);
  }
  command.insert(command.end(), {"--output=" + (fs::path(runs) / (point.name + ".log")).string(),
                                 "--open-mode=append", "--export=ALL"});
  if (!after.empty()) command.push_back("--dependency=afterany:" + after);
  // Without a task count Slurm gives a node one task's CPUs: ask for K tasks' (a node without them is not taken).
  const int ranksPerNode = point.nodes > 0 ? point.worldSize / point.nodes : 1;
  if (range && ranksPerNode > 1)
    command.push_back("--mincpus=" + std::to_string(ranksPerNode * cpusPerTaskIn(settings.slurm.sbatchArgs)));
  // The default GPU scripts: one GPU per rank of a node (train_gpus.sbatch: the whole world on one node).
  if (!settings.slurm.constraint.empty()) command.push_back("--constraint=" + settings.slurm.constraint);
  if (settings.slurm.script.empty() && wantsCuda(point, settings)) {
    if (point.nodes == 0) command.push_back("--ntasks-per-node=" + world);
    // A typed GPU (--gpu-type): every point, its baseline included, on the same GPU model. A --mode dp
    // point is one task that drives all the GPUs of its world.
    const std::string type = settings.slurm.gpuType.empty() ? "" : settings.slurm.gpuType + ":";
    command.push_back("--gres=gpu:" + type + (point.processGpus > 0 ? std::to_string(point.processGpus) : perNode));
  } else if (settings.slurm.script.empty() && point.nodes > 0) {
    // CPU ranks through train_multinode.sbatch: cancel its `#SBATCH --gres=gpu:1`, which nodes
    // without GPUs cannot satisfy ("Invalid generic resource (gres) specification").
    command.push_back("--gres=none");
  }
  command.insert(command.end(), settings.slurm.sbatchArgs.begin(), settings.slurm.sbatchArgs.end());
  command.push_back(script);
  command.insert(command.end(), settings.trainFlags.begin(), settings.trainFlags.end());
  command.insert(command.end(), point.trainFlags.begin(), point.trainFlags.end());
  return submission;
}

void checkSubmissions(const std::vector<GridPoint>& points, const SweepSettings& settings) {
  bool pending = false;
  for (const GridPoint& point : points) {
    if (run::isComplete(directoryState((fs::path(settings.outDir) / point.name).string()))) continue;
    pending = true;
    slurmScript(point, settings);
  }
  if (pending && findInPath("sbatch").empty())
    throw common::UsageError("sbatch is not in PATH: --launcher slurm submits the points with Slurm's sbatch; run "
                              "the sweep where Slurm's commands work (a login node) or use --launcher local");
}

bool resumesRun(const std::string& runDirectory, const std::optional<run::RunOutcome>& state) {
  return run::isContinuable(state) && run::hasCheckpoint(runDirectory);
}

SlurmLauncher::SlurmLauncher(SweepSettings settings) : settings_(std::move(settings)), session_(settings_.outDir) {}

SlurmLauncher::~SlurmLauncher() {
  try {
    cancelActive("cancelled: the sweep ended with an error", run::RunOutcome::kFailed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtbench sweep: could not cancel jobs %s: %s; cancel them with scancel\n",
                 common::joinList(activeIds(), " ").c_str(), e.what());
  }
}

int SlurmLauncher::stopSignal() { return session_.stopSignal(); }

std::vector<std::string> SlurmLauncher::activeIds() const {
  std::vector<std::string> ids;
  for (const Job& job : active_) ids.push_back(job.id);
  return ids;
}

void SlurmLauncher::appendToLog(const PointOutcome& outcome, const std::string& text) const {
  std::ofstream log(outcome.path + ".log", std::ios::app);
  log << text;
  if (!log) throw std::runtime_error("dtbench sweep: cannot write " + outcome.path + ".log; check the --out directory");
}

std::vector<PointOutcome> SlurmLauncher::run(const std::vector<GridPoint>& points, std::FILE* progress) {
  points_ = points;
  progress_ = progress;
  outcomes_.clear();
  std::vector<size_t> pending;
  for (size_t i = 0; i < points_.size(); ++i) {
    outcomes_.push_back(outcomeOf(points_[i], settings_.outDir));
    if (run::isComplete(directoryState(outcomes_[i].path))) {
      outcomes_[i].outcome = run::RunOutcome::kCompleted;
      outcomes_[i].skipped = true;
      outcomes_[i].attempt = firstFreeAttempt(outcomes_[i].path);
      printAttempt(progress_, outcomes_[i], "skipped (completed)");
    } else {
      pending.push_back(i);
    }
  }
  checkSubmissions(points_, settings_);

  if (!pending.empty() && pointsRunOneAtATime(settings_.slurm)) {
    std::fprintf(progress_, "the points share one machine (the emulated cluster, %s): each job waits for the one "
                            "before it (--dependency=afterany), so no two measure each other; --allow-overlap lets "
                            "them run together\n", common::kClusterVariable);
    std::fflush(progress_);
  }
  const double start = common::unixSeconds();
  for (const size_t i : pending) {
    if (session_.stopSignal() != 0) break;
    submit(i, true);
  }
  int squeueFailures = 0;
  while (!active_.empty()) {
    if (const int signal = session_.stopSignal(); signal != 0) {
      std::fprintf(stderr, "dtbench sweep: %s: cancelling jobs %s\n", strsignal(signal),
                   common::joinList(activeIds(), " ").c_str());
      cancelActive(std::string("cancelled by the sweep after ") + strsignal(signal), run::RunOutcome::kInterrupted);
      break;
    }
    if (settings_.slurm.timeoutSeconds > 0 && common::unixSeconds() - start > settings_.slurm.timeoutSeconds) {
      std::fprintf(stderr, "dtbench sweep: --slurm-timeout %g s reached: cancelling jobs %s\n",
                   settings_.slurm.timeoutSeconds, common::joinList(activeIds(), " ").c_str());
      cancelActive("cancelled: still queued or running after --slurm-timeout " +
                       std::to_string(static_cast<long>(settings_.slurm.timeoutSeconds)) + " s",
                   run::RunOutcome::kFailed);
      break;
    }
    if (session_.waitForSignal(kQueuePollMilliseconds)) continue;
    const CommandResult squeue =
        runCaptured({"squeue", "-h", "-j", common::joinList(activeIds(), ","), "-o", "%i,%T"}, {}, session_);
    std::map<std::string, std::string> states;
    if (squeue.exitCode == 0) {
      states = parseSqueue(squeue.out);
    } else if (squeue.err.find("Invalid job id") == std::string::npos) {
      if (squeueFailures++ % kSqueueWarningEvery == 0)
        std::fprintf(stderr, "dtbench sweep: squeue failed (exit code %d: %s); trying again\n", squeue.exitCode,
                     clientMessage(squeue.err).c_str());
      continue;
    }
    squeueFailures = 0;
    std::vector<std::pair<Job, std::string>> ended;
    for (const Job& job : active_) {
      const auto state = states.find(job.id);
      if (state == states.end() || jobHasEnded(state->second))
        ended.emplace_back(job, state == states.end() ? "" : state->second);
    }
    for (const auto& [job, state] : ended) {
      const auto id = job.id;  // a lambda may not capture a structured binding before C++20
      active_.erase(std::find_if(active_.begin(), active_.end(), [&](const Job& j) { return j.id == id; }));
      finish(job, state);
    }
  }

  if (session_.stopSignal() == 0) {
    std::set<std::string> ids(submitted_.begin(), submitted_.end());
    for (const std::string& id : sweepJobIds(settings_.outDir)) ids.insert(id);
    writeSweepAccounting(settings_.outDir, {ids.begin(), ids.end()}, session_, stderr);
  }

  std::vector<PointOutcome> reached;
  for (const PointOutcome& outcome : outcomes_)
    if (outcome.outcome) reached.push_back(outcome);
  return reached;
}

void SlurmLauncher::submit(size_t index, bool firstAttempt) {
  PointOutcome& outcome = outcomes_[index];
  const bool resume = resumesRun(outcome.path, directoryState(outcome.path));
  if (!resume) moveAttemptAside(outcome.path);
  outcome.attempt = firstFreeAttempt(outcome.path);
  ++outcome.attemptsRun;
  outcome.startedAt = common::unixSeconds();
  outcome.seconds = 0;
  outcome.exitCode = 0;
  outcome.error.clear();
  outcome.outcome.reset();

  // One at a time where the points share a machine: after the job submitted last, while it is active.
  std::string after;
  if (pointsRunOneAtATime(settings_.slurm) && !submitted_.empty() &&
      std::any_of(active_.begin(), active_.end(), [&](const Job& j) { return j.id == submitted_.back(); }))
    after = submitted_.back();
  const SbatchSubmission submission = sbatchSubmission(points_[index], settings_, after);
  std::string line;
  for (const auto& [name, value] : submission.environment) line += name + "=" + quoted({value}) + " ";
  appendToLog(outcome, attemptHeader(outcome, line + quoted(submission.command)));
  std::error_code error;
  const auto logSize = fs::file_size(outcome.path + ".log", error);
  const std::streamoff offset = error ? 0 : static_cast<std::streamoff>(logSize);

  const CommandResult sbatch = runCaptured(submission.command, submission.environment, session_);
  const std::string id = parsableJobId(sbatch.out);
  if (sbatch.exitCode != 0 || id.empty()) {
    outcome.outcome = run::RunOutcome::kFailed;
    outcome.exitCode = sbatch.exitCode;
    outcome.error = "sbatch failed with exit code " + std::to_string(sbatch.exitCode) + ": " +
                    clientMessage(sbatch.err.empty() ? sbatch.out : sbatch.err);
    appendToLog(outcome, "==== " + outcome.error + "\n");
    printAttempt(progress_, outcome, "failed (sbatch)");
    return;
  }
  active_.push_back(Job{index, id, offset});
  submitted_.push_back(id);
  std::fprintf(progress_, "%-40s submitted as job %s, attempt %d%s\n", outcome.name.c_str(), id.c_str(),
               outcome.attempt, resume && firstAttempt ? " (continues its checkpoint)" : "");
  std::fflush(progress_);
}

void SlurmLauncher::finish(const Job& job, const std::string& slurmState) {
  PointOutcome& outcome = outcomes_[job.point];
  outcome.seconds = common::unixSeconds() - outcome.startedAt;
  const CommandResult info = runCaptured({"scontrol", "-o", "show", "job", job.id}, {}, session_);
  std::string jobState = info.exitCode == 0 ? scontrolField(info.out, "JobState") : "";
  if (jobState.empty()) jobState = slurmState.empty() ? "ENDED" : slurmState;
  const std::string slurmExitCode = info.exitCode == 0 ? scontrolField(info.out, "ExitCode") : "";
  outcome.exitCode = slurmExitCodeOf(slurmExitCode);
  appendToLog(outcome, "==== job " + job.id + " " + jobState +
                           (slurmExitCode.empty() ? "" : " with exit code " + slurmExitCode) + " after " +
                           std::to_string(outcome.seconds) + " s\n");
  if (!fs::exists(outcome.path)) fs::create_directories(outcome.path);

  const std::optional<run::RunOutcome> status = directoryState(outcome.path);
  if (run::isComplete(status)) {
    outcome.outcome = status;
    printAttempt(progress_, outcome, outcome.state());
    return;
  }
  std::string error = summaryError(outcome.path);
  if (error.empty()) error = errorFromLog(outcome.path + ".log", job.logOffset);
  outcome.error = "job " + job.id + " " + jobState +
                  (slurmExitCode.empty() ? "" : " (exit code " + slurmExitCode + ")") + ": " + error;
  if (run::isContinuable(status)) {
    outcome.outcome = status;
    printAttempt(progress_, outcome, outcome.state());
    return;
  }
  outcome.outcome = run::RunOutcome::kFailed;
  const std::string unchanging = unchangingFailure(outcome.exitCode, outcome.path + ".log", job.logOffset, jobState);
  if (unchanging == kOutOfMemoryFailure)
    outcome.error += std::string(" (killed by the out-of-memory killer: ") + kOutOfMemoryHint + ")";
  const bool retry = outcome.attemptsRun <= settings_.retries && session_.stopSignal() == 0 && unchanging.empty();
  printAttempt(progress_, outcome,
               !unchanging.empty() ? "failed (" + unchanging + ")" : retry ? "failed (retrying)" : "failed");
  if (retry) submit(job.point, false);
}

std::vector<std::string> SlurmLauncher::cancelJobs(const std::vector<std::string>& ids) {
  std::vector<std::string> toCancel = ids;
  const double deadline = common::unixSeconds() + kCancelDeadlineSeconds;
  while (true) {
    if (!toCancel.empty()) {
      std::vector<std::string> command = {"scancel"};
      command.insert(command.end(), toCancel.begin(), toCancel.end());
      const CommandResult scancel = runCaptured(command, {}, session_);
      if (scancel.exitCode != 0 && scancel.err.find("Invalid job id") == std::string::npos)
        std::fprintf(stderr, "dtbench sweep: scancel %s failed (exit code %d: %s)\n",
                     common::joinList(toCancel, " ").c_str(), scancel.exitCode, clientMessage(scancel.err).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kCancelPollMilliseconds));
    const CommandResult squeue = runCaptured({"squeue", "-h", "-j", common::joinList(ids, ","), "-o", "%i,%T"}, {}, session_);
    if (squeue.exitCode != 0 && squeue.err.find("Invalid job id") != std::string::npos) return {};
    std::vector<std::string> queued;
    toCancel.clear();
    if (squeue.exitCode == 0) {
      for (const auto& [id, jobState] : parseSqueue(squeue.out)) {
        if (jobHasEnded(jobState)) continue;
        queued.push_back(id);
        if (jobState != "COMPLETING" && jobState != "RUNNING" && jobState != "CONFIGURING") toCancel.push_back(id);
      }
      if (queued.empty()) return {};
    } else {
      queued = ids;  // squeue failed: keep asking until the deadline
    }
    if (common::unixSeconds() > deadline) return queued;
  }
}

void SlurmLauncher::cancelActive(const std::string& reason, run::RunOutcome state) {
  if (active_.empty()) return;
  const std::vector<std::string> ids = activeIds();
  const std::vector<std::string> queued = cancelJobs(ids);
  if (!queued.empty())
    std::fprintf(stderr, "dtbench sweep: jobs %s are still queued %g s after scancel; cancel them by hand\n",
                 common::joinList(queued, " ").c_str(), kCancelDeadlineSeconds);
  const std::vector<Job> jobs = std::move(active_);
  active_.clear();
  for (const Job& job : jobs) {
    PointOutcome& outcome = outcomes_[job.point];
    outcome.seconds = common::unixSeconds() - outcome.startedAt;
    outcome.outcome = state;
    outcome.error = "job " + job.id + " " + reason;
    appendToLog(outcome, "==== " + outcome.error + "\n");
    printAttempt(progress_, outcome, outcome.state());
  }
}

}  // namespace dtbench::sweep
