#pragma once
// Work: the handle of one asynchronous communication operation (c10d's word for it).
//
// Contract:
//  - wait() blocks until the operation has completed, then returns; the operation's output tensors
//    are valid only after wait() returned. It throws CommError when the operation failed or did not
//    complete before its deadline; the message names the operation and, when one peer is involved
//    or can be identified, the peer rank. After a failure the communicator that issued the work is
//    unusable (Gloo keeps the failed operation queued; MPI cannot cancel collectives).
//  - isCompleted() never blocks. It may stay false until wait() is called for work whose library
//    only observes completion inside a wait (Gloo's send and recv): poll, but end with wait().
//  - A Work is waited on by one thread at a time. Calling wait() again after it returned is a no-op.
//
// Deadline: every Work is created with one (the communicator's --timeout from when the operation was
// issued); wait() never blocks past it by more than the library's polling granularity.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtbench::comm {

// A failed or timed-out communication operation. Fatal for the run (docs/design.md, "Signals, failures
// and resume").
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  static Deadline after(std::chrono::milliseconds timeout) { return Deadline(Clock::now() + timeout, timeout); }
  Clock::time_point at() const { return at_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  bool passed() const { return Clock::now() >= at_; }
  // Time left, at least 1 ms (libraries treat 0 as "no timeout").
  std::chrono::milliseconds remaining() const;
  // "3.0 s (--timeout)": for messages.
  std::string describe() const;

 private:
  Deadline(Clock::time_point at, std::chrono::milliseconds timeout) : at_(at), timeout_(timeout) {}
  Clock::time_point at_;
  std::chrono::milliseconds timeout_;
};

// Said of a collective (all-reduce, broadcast, all-gather, barrier) that passed its deadline: every rank
// waits in it for every other at once, so nothing tells which rank is late, where a send or receive names
// its peer (the point-to-point topologies name the rank they waited for).
inline constexpr const char* kLateRankUnknown =
    " (a collective waits for every rank at once, so it cannot tell which one is late; a point-to-point "
    "topology, --topology ring, names the rank it waited for)";

class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
  virtual bool isCompleted() = 0;
};

using WorkPtr = std::shared_ptr<Work>;

// Work that is complete when created (buffered sends, world-size-1 collectives).
WorkPtr completedWork();

// Waits for every work in order; the first failure propagates (the rest are abandoned, which is
// safe only because a failure makes the communicator unusable anyway).
void waitAll(const std::vector<WorkPtr>& works);

}  // namespace dtbench::comm
