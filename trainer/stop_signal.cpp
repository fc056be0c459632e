#include "trainer/stop_signal.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dtbench::trainer {

namespace {

// Process-wide by nature (see the header): a signal handler can reach nothing else.
std::atomic<int> stopSignal{0};
std::atomic<bool> handlerAlive{false};
static_assert(std::atomic<int>::is_always_lock_free, "Note [The stop flag is a lock-free atomic]");

extern "C" void recordStopSignal(int signal) {
  int none = 0;
  stopSignal.compare_exchange_strong(none, signal);
}

void install(int signal, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = recordStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGINT);
  if (sigaction(signal, &action, previous) != 0) {
    throw std::runtime_error(std::string("cannot install the handler for ") + strsignal(signal) + ": " +
                             std::strerror(errno));
  }
}

}  // namespace

StopSignalHandler::StopSignalHandler() {
  if (handlerAlive.exchange(true)) {
    throw std::logic_error("a StopSignalHandler is already installed; signal dispositions are process-wide, "
                           "so keep one handler for the whole run");
  }
  stopSignal = 0;
  try {
    install(SIGTERM, &previousTerm_);
  } catch (...) {
    handlerAlive = false;
    throw;
  }
  try {
    install(SIGINT, &previousInt_);
  } catch (...) {
    sigaction(SIGTERM, &previousTerm_, nullptr);
    handlerAlive = false;
    throw;
  }
}

StopSignalHandler::~StopSignalHandler() {
  sigaction(SIGINT, &previousInt_, nullptr);
  sigaction(SIGTERM, &previousTerm_, nullptr);
  handlerAlive = false;
}

int StopSignalHandler::signalNumber() const { return stopSignal.load(); }

void StopSignalHandler::clear() { stopSignal = 0; }

bool stopSignalRequested() { return handlerAlive && stopSignal != 0; }

}  // namespace dtbench::trainer
