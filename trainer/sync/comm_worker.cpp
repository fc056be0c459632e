#include "trainer/sync/comm_worker.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include "compat/torch_compat.h"

namespace dtbench::trainer {

CommWorker::CommWorker() : thread_([this] { loop(); }) {}

CommWorker::~CommWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void CommWorker::submit(std::string name, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Task t;
    t.interval.name = std::move(name);
    t.interval.issued = Clock::now();
    t.run = std::move(task);
    queue_.push_back(std::move(t));
  }
  wake_.notify_one();
}

std::vector<CommWorker::Interval> CommWorker::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  if (failure_) std::rethrow_exception(failure_);
  std::vector<Interval> done;
  done.swap(finished_);
  return done;
}

void CommWorker::loop() {
  // Packing and unpacking buckets here must not bring a second OpenMP team onto the training
  // thread's cores: Note [One intra-op thread off the training thread] (compat/torch_compat.h).
  compat::useOneIntraOpThread();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    if (failure_) {  // skipped: the communicator is unusable after a failure
      if (queue_.empty()) idle_.notify_all();
      continue;
    }
    busy_ = true;
    lock.unlock();
    task.interval.started = Clock::now();
    std::exception_ptr error;
    try {
      task.run();
    } catch (...) {
      error = std::current_exception();
    }
    task.interval.completed = Clock::now();
    lock.lock();
    busy_ = false;
    if (error && !failure_) failure_ = error;
    finished_.push_back(std::move(task.interval));
    if (queue_.empty()) idle_.notify_all();
  }
}

double unionSeconds(const std::vector<CommWorker::Interval>& intervals) {
  std::vector<std::pair<CommWorker::Clock::time_point, CommWorker::Clock::time_point>> spans;
  for (const auto& i : intervals) spans.emplace_back(i.issued, std::max(i.issued, i.completed));
  std::sort(spans.begin(), spans.end());
  double total = 0;
  size_t k = 0;
  while (k < spans.size()) {
    auto start = spans[k].first;
    auto end = spans[k].second;
    for (++k; k < spans.size() && spans[k].first <= end; ++k) end = std::max(end, spans[k].second);
    total += std::chrono::duration<double>(end - start).count();
  }
  return total;
}

}  // namespace dtbench::trainer
