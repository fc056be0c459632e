#include "experiments/sweep/local_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/clock.h"
#include "common/usage_error.h"
#include "common/oom_kills.h"
#include "experiments/sweep/out_of_memory.h"
#include "experiments/sweep/point_attempts.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

constexpr int kLocalPollMilliseconds = 200;

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void appendText(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::vector<std::string> pointCommand(const GridPoint& point, const SweepSettings& settings) {
  if (point.nodes > 1)  // checkLocalPlacement refuses such a grid before any point runs
    throw std::invalid_argument("dtbench sweep: point " + point.name + " asks for " + std::to_string(point.nodes) +
                                " nodes, which the local launcher cannot place");
  std::vector<std::string> command;
  if (point.worldSize > 1)
    command = {settings.executable, "launch", "-n", std::to_string(point.worldSize), "--"};
  command.insert(command.end(), {settings.executable, "train"});
  command.insert(command.end(), settings.trainFlags.begin(), settings.trainFlags.end());
  command.insert(command.end(), point.trainFlags.begin(), point.trainFlags.end());
  command.insert(command.end(), {"--out", (fs::path(settings.outDir) / point.name).string()});
  return command;
}

std::vector<std::pair<std::string, std::string>> pointEnvironment(const GridPoint& point) {
  if (point.processGpus < 1) return {};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> devices;
  if (visible == nullptr) {
    for (int d = 0; d < point.processGpus; ++d) devices.push_back(std::to_string(d));
  } else {
    std::string list = visible;
    for (size_t start = 0; start < list.size() && static_cast<int>(devices.size()) < point.processGpus;) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) devices.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    if (static_cast<int>(devices.size()) < point.processGpus)
      throw common::UsageError("point " + point.name + " drives " + std::to_string(point.processGpus) +
                               " GPUs (--mode dp, world " + std::to_string(point.processGpus) +
                               ") but CUDA_VISIBLE_DEVICES='" + list + "' names " + std::to_string(devices.size()) +
                               "; name more devices in CUDA_VISIBLE_DEVICES, or give dp points fewer in world");
  }
  std::string value;
  for (const std::string& device : devices) value += (value.empty() ? "" : ",") + device;
  return {{"CUDA_VISIBLE_DEVICES", value}};
}

LocalLauncher::LocalLauncher(SweepSettings settings)
    : settings_(std::move(settings)),
      session_(settings_.outDir),
      memoryEvents_(settings_.memoryEvents ? *settings_.memoryEvents : common::memoryEventsFile()) {}

void LocalLauncher::forwardSignals(pid_t child) {
  for (const int signal : session_.takeSignals()) {
    std::fprintf(stderr, "dtbench sweep: forwarding %s to the running point; the sweep stops after it\n",
                 strsignal(signal));
    kill(-child, signal);
  }
}

int LocalLauncher::stopSignal() { return session_.stopSignal(); }

std::vector<PointOutcome> LocalLauncher::run(const std::vector<GridPoint>& points, std::FILE* progress) {
  std::vector<PointOutcome> outcomes;
  for (const GridPoint& point : points) {
    if (stopSignal() != 0) break;
    outcomes.push_back(runPoint(point, progress));
  }
  return outcomes;
}

PointOutcome LocalLauncher::runPoint(const GridPoint& point, std::FILE* progress) {
  PointOutcome outcome = outcomeOf(point, settings_.outDir);
  const std::string logPath = outcome.path + ".log";
  if (run::isComplete(directoryState(outcome.path))) {
    outcome.outcome = run::RunOutcome::kCompleted;
    outcome.skipped = true;
    outcome.attempt = firstFreeAttempt(outcome.path);
    printAttempt(progress, outcome, "skipped (completed)");
    return outcome;
  }

  const std::vector<std::string> command = pointCommand(point, settings_);
  const std::vector<std::pair<std::string, std::string>> environment = pointEnvironment(point);
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);

  for (int tries = 0; tries <= settings_.retries; ++tries) {
    moveAttemptAside(outcome.path);
    outcome.attempt = firstFreeAttempt(outcome.path);
    ++outcome.attemptsRun;
    fs::create_directories(outcome.path);
    const int logFd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logFd < 0) throw std::runtime_error("dtbench sweep: cannot write " + logPath + ": " + std::strerror(errno));
    outcome.startedAt = common::unixSeconds();
    appendText(logFd, attemptHeader(outcome, quoted(command)));
    const std::streamoff offset = lseek(logFd, 0, SEEK_END);

    // The cgroup's out-of-memory kill count before the child runs (out_of_memory.h).
    const std::optional<long long> oomKillsBefore = common::oomKills(memoryEvents_);
    const pid_t sweepPid = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("dtbench sweep: fork: ") + std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      // The sweep died before prctl: its death signal will never come, so the point never starts.
      if (getppid() != sweepPid) _exit(128 + SIGTERM);
      setpgid(0, 0);
      session_.restoreSignalMask();
      const int devNull = open("/dev/null", O_RDONLY);
      if (devNull >= 0) dup2(devNull, STDIN_FILENO);
      dup2(logFd, STDOUT_FILENO);
      dup2(logFd, STDERR_FILENO);
      for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
      execv(argv[0], argv.data());
      std::fprintf(stderr, "dtbench sweep: cannot run '%s': %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid);
    int waitStatus = 0;
    while (true) {
      session_.waitForSignal(kLocalPollMilliseconds);
      forwardSignals(pid);
      const pid_t done = waitpid(pid, &waitStatus, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
    }
    outcome.exitCode = exitCodeOf(waitStatus);
    outcome.seconds = common::unixSeconds() - outcome.startedAt;
    // The sweep sends its children no SIGKILL, and dtbench launch exits 137 for a rank that got one
    // it did not send: the kernel's out-of-memory killer, when this cgroup's count of its kills rose.
    const bool killed = outcome.exitCode == 128 + SIGKILL;
    bool countRead = false, outOfMemory = false;
    std::string countRise;  // "from B to A"
    if (killed && oomKillsBefore)
      if (const std::optional<long long> oomKillsAfter = common::oomKills(memoryEvents_)) {
        countRead = true;
        outOfMemory = *oomKillsAfter > *oomKillsBefore;
        countRise = "from " + std::to_string(*oomKillsBefore) + " to " + std::to_string(*oomKillsAfter);
      }
    appendText(logFd, "==== exit code " + std::to_string(outcome.exitCode) + " after " +
                          std::to_string(outcome.seconds) + " s\n");
    close(logFd);

    const std::optional<run::RunOutcome> status = directoryState(outcome.path);
    if (outcome.exitCode == 0 && run::isComplete(status)) {
      outcome.outcome = status;
      outcome.error.clear();
      printAttempt(progress, outcome, outcome.state());
      return outcome;
    }
    outcome.error = summaryError(outcome.path);
    if (outOfMemory)
      outcome.error = "killed by the kernel's out-of-memory killer (SIGKILL; this cgroup's oom_kill count rose " +
                      countRise + "): " + kOutOfMemoryHint;
    else if (killed && outcome.error.empty())
      outcome.error = std::string("killed by SIGKILL (not sent by dtbench sweep; ") +
                      (countRead ? "this cgroup's out-of-memory kill count did not rise"
                                 : "the kernel's out-of-memory killer is the usual sender") +
                      "); see " + logPath;
    if (outcome.error.empty()) outcome.error = errorFromLog(logPath, offset);
    if (outcome.exitCode == 0)
      outcome.error = "exited 0 but summary.json says '" + run::outcomeText(status) + "'; see " + logPath;
    outcome.error = "exit code " + std::to_string(outcome.exitCode) + ": " + outcome.error;
    if (session_.stopSignal() != 0 || outcome.exitCode == run::kRequeueExitCode || run::isContinuable(status)) {
      outcome.outcome = run::RunOutcome::kInterrupted;
      printAttempt(progress, outcome, outcome.state());
      return outcome;
    }
    outcome.outcome = run::RunOutcome::kFailed;
    const std::string unchanging =
        outOfMemory ? std::string(kOutOfMemoryFailure) : unchangingFailure(outcome.exitCode, logPath, offset);
    if (!unchanging.empty()) {
      printAttempt(progress, outcome, "failed (" + unchanging + ")");
      return outcome;
    }
    printAttempt(progress, outcome, tries < settings_.retries ? "failed (retrying)" : "failed");
  }
  return outcome;
}

}  // namespace dtbench::sweep
