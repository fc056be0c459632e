#include "experiments/sweep/sweep_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/file_lock.h"

namespace dtbench::sweep {

namespace {

common::FileLock lockSweep(const std::string& outDir) {
  std::error_code error;
  std::filesystem::create_directories(outDir, error);
  const std::string lockPath = (std::filesystem::path(outDir) / ".sweep.lock").string();
  try {
    return common::FileLock(lockPath);
  } catch (const common::FileLockHeld& held) {
    throw std::runtime_error("dtbench sweep: another sweep (" + held.owner() + ") is running in " + outDir +
                             "; wait for it to end or give another --out");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("dtbench sweep: ") + e.what() + "; give an --out directory you can write");
  }
}

}  // namespace

SweepSession::SweepSession(const std::string& outDir) : lock_(lockSweep(outDir)) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, &oldMask_);
  signalFd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd_ < 0) {
    const int saved = errno;
    sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
    throw std::runtime_error(std::string("dtbench sweep: signalfd: ") + std::strerror(saved));
  }
}

SweepSession::~SweepSession() {
  close(signalFd_);
  sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
}

std::vector<int> SweepSession::takeSignals() {
  std::vector<int> signals;
  signalfd_siginfo info;
  while (read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int signal = static_cast<int>(info.ssi_signo);
    if (stopSignal_ == 0) stopSignal_ = signal;
    signals.push_back(signal);
  }
  return signals;
}

int SweepSession::stopSignal() {
  takeSignals();
  return stopSignal_;
}

bool SweepSession::waitForSignal(int milliseconds) {
  pollfd signals{signalFd_, POLLIN, 0};
  return poll(&signals, 1, milliseconds) > 0 && (signals.revents & POLLIN) != 0;
}

void SweepSession::restoreSignalMask() const { sigprocmask(SIG_SETMASK, &oldMask_, nullptr); }

}  // namespace dtbench::sweep
