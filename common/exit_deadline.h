#pragma once
// ExitDeadline: a deadline for a call that cannot be cancelled and may never return, such as
// MPI_Init_thread when a peer died while the ranks were meeting (Open MPI then waits in its start-up
// exchange forever, whatever --timeout says). While an ExitDeadline lives, a thread waits for it; if
// it is still alive after `limit`, that thread prints "dtbench: error: MESSAGE" to stderr and ends the
// process with exit status 1 (std::_Exit: nothing else can run, the stuck call holds its locks).
//
//   {
//     const common::ExitDeadline deadline(timeout, "MPI_Init_thread did not return within 300 s ...");
//     MPI_Init_thread(...);
//   }  // returned in time: the waiting thread is stopped and joined
//
// A limit of zero or less sets no deadline.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace dtbench::common {

class ExitDeadline {
 public:
  ExitDeadline(std::chrono::milliseconds limit, std::string message);
  ~ExitDeadline();
  ExitDeadline(const ExitDeadline&) = delete;
  ExitDeadline& operator=(const ExitDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread watcher_;
};

}  // namespace dtbench::common
