#include "common/exit_deadline.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace dtbench::common {

ExitDeadline::ExitDeadline(std::chrono::milliseconds limit, std::string message) {
  if (limit.count() <= 0) return;
  watcher_ = std::thread([this, limit, message = std::move(message)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_.wait_for(lock, limit, [this] { return finished_; })) return;
    std::fprintf(stderr, "dtbench: error: %s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  });
}

ExitDeadline::~ExitDeadline() {
  if (!watcher_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  done_.notify_one();
  watcher_.join();
}

}  // namespace dtbench::common
