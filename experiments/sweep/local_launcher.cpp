#include "experiments/sweep/local_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iosfwd>
#include <stdexcept>
#include <utility>

#include "common/clock.h"
#include "experiments/sweep/point_attempts.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

constexpr int kPollMilliseconds = 200;

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

LocalLauncher::LocalLauncher(SweepSettings settings)
    : settings_(std::move(settings)), session_(settings_.outDir) {}

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
      execv(argv[0], argv.data());
      std::fprintf(stderr, "dtbench sweep: cannot run '%s': %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid);
    int waitStatus = 0;
    while (true) {
      session_.waitForSignal(kPollMilliseconds);
      forwardSignals(pid);
      const pid_t done = waitpid(pid, &waitStatus, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
    }
    outcome.exitCode = exitCodeOf(waitStatus);
    outcome.seconds = common::unixSeconds() - outcome.startedAt;
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
    if (const std::string unchanging = unchangingFailure(outcome.exitCode, logPath, offset); !unchanging.empty()) {
      printAttempt(progress, outcome, "failed (" + unchanging + ")");
      return outcome;
    }
    printAttempt(progress, outcome, tries < settings_.retries ? "failed (retrying)" : "failed");
  }
  return outcome;
}

}  // namespace dtbench::sweep
