#pragma once
// CommWorker: a training rank's communication thread. Collectives queued on it run one at a time,
// in the order they were queued, while the training thread goes on with backward: this is what
// makes bucketed all-reduce overlap computation for every backend (Open MPI has no progress thread
// of its own; Gloo's and the topology algorithms' waits would otherwise block backward).
//
// Contract:
//  - submit(name, task) may be called from any thread (autograd hooks run on the thread that called
//    backward); tasks run on the worker thread in submission order, never two at once.
//  - drain() blocks until every task submitted so far has finished and returns their intervals
//    since the previous drain(), in submission order. If a task threw, the tasks queued after it
//    are skipped and drain() rethrows the first failure (a failed collective makes the
//    communicator unusable: docs/design.md, "Signals, failures and resume"). The worker is then
//    failed for good.
//  - Everything a task touches happens-before drain() returns, so the training thread may use the
//    communicator itself between a drain() and the next submit() (MPI_THREAD_SERIALIZED suffices).
//  - The destructor waits for the running task (bounded by the collectives' --timeout) and skips
//    the queued ones.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dtbench::trainer {

class CommWorker {
 public:
  using Clock = std::chrono::steady_clock;

  struct Interval {
    std::string name;
    Clock::time_point issued;     // submit() called
    Clock::time_point started;    // the worker began the task
    Clock::time_point completed;  // the task returned
  };

  CommWorker();
  ~CommWorker();
  CommWorker(const CommWorker&) = delete;
  CommWorker& operator=(const CommWorker&) = delete;

  void submit(std::string name, std::function<void()> task);
  std::vector<Interval> drain();

 private:
  struct Task {
    Interval interval;
    std::function<void()> run;
  };

  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  std::vector<Interval> finished_;
  std::exception_ptr failure_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// Length in seconds of the union of [issued, completed] over `intervals` (overlapping intervals
// counted once): comm_total_s (docs/design.md, "The step").
double unionSeconds(const std::vector<CommWorker::Interval>& intervals);

}  // namespace dtbench::trainer
