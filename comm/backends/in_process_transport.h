#pragma once
// InProcessWorld / InProcessPointToPoint: N ranks as threads of one process, exchanging tensors
// through shared mailboxes: the transport of the test fixture (gloo's tests work the same way), so
// topology algorithms are tested without processes, sockets or MPI.
//
// Contract: PointToPoint's. Sends are buffered (the bytes are copied when send() is called, so the
// Work is complete at once); a recv's wait() blocks until the matching message arrives or the
// deadline passes (CommError naming the peer). One InProcessPointToPoint per rank, each used by its
// own thread; the world outlives them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "comm/point_to_point.h"
#include "comm/work.h"

namespace dtbench::comm {

class InProcessWorld {
 public:
  explicit InProcessWorld(int size, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Mailbox operations, used by InProcessPointToPoint.
  void post(int src, int dst, int tag, std::vector<uint8_t> bytes);
  // Takes the oldest message (src -> dst, tag) if there is one.
  bool tryTake(int src, int dst, int tag, std::vector<uint8_t>& bytes);
  // Blocks until a message arrives or `until`; false on timeout.
  bool take(int src, int dst, int tag, std::vector<uint8_t>& bytes, std::chrono::steady_clock::time_point until);

 private:
  using Key = std::tuple<int, int, int>;
  int size_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<Key, std::deque<std::vector<uint8_t>>> mailboxes_;
};

class InProcessPointToPoint final : public PointToPoint {
 public:
  InProcessPointToPoint(InProcessWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override;

 private:
  InProcessWorld& world_;
  int rank_;
};

}  // namespace dtbench::comm
