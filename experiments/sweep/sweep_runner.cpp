#include "experiments/sweep/sweep_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

constexpr int kInterrupted = 75;  // dtbench train stopped by a signal after a checkpoint
constexpr size_t kErrorLength = 400;

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

nlohmann::json readSummary(const std::string& runDirectory) {
  std::ifstream in(fs::path(runDirectory) / "summary.json");
  if (!in) return nullptr;
  nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  return summary.is_discarded() ? nlohmann::json(nullptr) : summary;
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

std::string localTime(double unix) {
  const std::time_t t = static_cast<std::time_t>(unix);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

void appendText(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The error of a failed attempt: the last log line (from `offset`) that mentions an error, else the
// last non-empty line.
std::string errorFromLog(const std::string& logPath, std::streamoff offset) {
  std::ifstream in(logPath);
  in.seekg(offset);
  std::string lastError, lastLine;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    lastLine = line;
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("error") != std::string::npos) lastError = line;
  }
  std::string error = lastError.empty() ? lastLine : lastError;
  if (error.size() > kErrorLength) error = error.substr(0, kErrorLength) + "...";
  return error;
}

int firstFreeAttempt(const std::string& path) {
  int k = 1;
  while (fs::exists(path + ".attempt-" + std::to_string(k))) ++k;
  return k;
}

std::string describe(const GridPoint& point) {
  std::string text;
  for (const auto& [key, value] : point.settings) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text;
}

}  // namespace

std::vector<std::string> pointCommand(const GridPoint& point, const SweepSettings& settings) {
  std::vector<std::string> command;
  if (point.worldSize > 1)
    command = {settings.executable, "launch", "-n", std::to_string(point.worldSize), "--"};
  command.insert(command.end(), {settings.executable, "train"});
  command.insert(command.end(), settings.trainFlags.begin(), settings.trainFlags.end());
  command.insert(command.end(), point.trainFlags.begin(), point.trainFlags.end());
  command.insert(command.end(), {"--out", (fs::path(settings.outDir) / point.name).string()});
  return command;
}

std::string directoryState(const std::string& runDirectory) {
  if (!fs::exists(runDirectory)) return "";
  const nlohmann::json summary = readSummary(runDirectory);
  if (summary.is_object() && summary.contains("status") && summary["status"].is_string())
    return summary["status"].get<std::string>();
  return "unknown";
}

SweepRunner::SweepRunner(SweepSettings settings) : settings_(std::move(settings)) {
  std::error_code error;
  fs::create_directories(settings_.outDir, error);
  const std::string lockPath = (fs::path(settings_.outDir) / ".sweep.lock").string();
  lockFd_ = open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lockFd_ < 0)
    throw std::runtime_error("dtbench sweep: cannot create " + lockPath + ": " + std::strerror(errno) +
                             "; give an --out directory you can write");
  if (flock(lockFd_, LOCK_EX | LOCK_NB) != 0) {
    close(lockFd_);
    throw std::runtime_error("dtbench sweep: another sweep is running in " + settings_.outDir +
                             "; wait for it to end or give another --out");
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, &oldMask_);
  signalFd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd_ < 0) {
    sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
    close(lockFd_);
    throw std::runtime_error(std::string("dtbench sweep: signalfd: ") + std::strerror(errno));
  }
}

SweepRunner::~SweepRunner() {
  close(signalFd_);
  sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
  close(lockFd_);
}

void SweepRunner::readSignals(pid_t child) {
  signalfd_siginfo info;
  while (read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int signal = static_cast<int>(info.ssi_signo);
    if (stopSignal_ == 0) stopSignal_ = signal;
    if (child > 0) {
      std::fprintf(stderr, "dtbench sweep: forwarding %s to the running point; the sweep stops after it\n",
                   strsignal(signal));
      kill(-child, signal);
    }
  }
}

int SweepRunner::stopSignal() {
  readSignals(-1);
  return stopSignal_;
}

PointOutcome SweepRunner::run(const GridPoint& point, std::FILE* progress) {
  PointOutcome outcome;
  outcome.name = point.name;
  outcome.path = (fs::path(settings_.outDir) / point.name).string();
  outcome.worldSize = point.worldSize;
  outcome.configuration = describe(point);
  const std::string logPath = outcome.path + ".log";
  auto report = [&](const std::string& state) {
    std::fprintf(progress, "%-40s %-20s %8.1f s  attempt %d\n", point.name.c_str(), state.c_str(), outcome.seconds,
                 outcome.attempt);
    std::fflush(progress);
  };

  if (directoryState(outcome.path) == "completed") {
    outcome.state = "skipped";
    outcome.attempt = firstFreeAttempt(outcome.path);
    report("skipped (completed)");
    return outcome;
  }

  const std::vector<std::string> command = pointCommand(point, settings_);
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);

  for (int tries = 0; tries <= settings_.retries; ++tries) {
    if (fs::exists(outcome.path)) {
      const std::string aside = outcome.path + ".attempt-" + std::to_string(firstFreeAttempt(outcome.path));
      fs::rename(outcome.path, aside);
    }
    outcome.attempt = firstFreeAttempt(outcome.path);
    ++outcome.attemptsRun;
    fs::create_directories(outcome.path);
    const int logFd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logFd < 0) throw std::runtime_error("dtbench sweep: cannot write " + logPath + ": " + std::strerror(errno));
    outcome.startedAt = unixSeconds();
    appendText(logFd, "==== dtbench sweep: " + point.name + " attempt " + std::to_string(outcome.attempt) + " at " +
                          localTime(outcome.startedAt) + "\n$ " + quoted(command) + "\n");
    const std::streamoff offset = lseek(logFd, 0, SEEK_END);

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("dtbench sweep: fork: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
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
      pollfd signals{signalFd_, POLLIN, 0};
      poll(&signals, 1, 200);
      readSignals(pid);
      const pid_t done = waitpid(pid, &waitStatus, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
    }
    outcome.exitCode = exitCodeOf(waitStatus);
    outcome.seconds = unixSeconds() - outcome.startedAt;
    appendText(logFd, "==== exit code " + std::to_string(outcome.exitCode) + " after " +
                          std::to_string(outcome.seconds) + " s\n");
    close(logFd);

    const nlohmann::json summary = readSummary(outcome.path);
    const std::string status = directoryState(outcome.path);
    if (outcome.exitCode == 0 && status == "completed") {
      outcome.state = "completed";
      outcome.error.clear();
      report("completed");
      return outcome;
    }
    outcome.error = summary.is_object() && summary.contains("error") && summary["error"].is_string()
                        ? summary["error"].get<std::string>()
                        : errorFromLog(logPath, offset);
    if (outcome.exitCode == 0)
      outcome.error = "exited 0 but summary.json says '" + status + "'; see " + logPath;
    outcome.error = "exit code " + std::to_string(outcome.exitCode) + ": " + outcome.error;
    if (stopSignal_ != 0 || outcome.exitCode == kInterrupted || status == "interrupted") {
      outcome.state = "interrupted";
      report("interrupted");
      return outcome;
    }
    outcome.state = "failed";
    report(tries < settings_.retries ? "failed (retrying)" : "failed");
  }
  return outcome;
}

}  // namespace dtbench::sweep
