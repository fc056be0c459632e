#pragma once
// MessageLog: every operation one rank hands to its communicator, in the order it posted them:
// the rows of messages.rank<R>.csv (docs/wire.md, "Message log"), which the packet capture's
// reconciliation matches against the wire.
//
//   index,t_post_s,t_done_s,op,src,dst,bytes,category
//   0,1764138000.123456,1764138000.125001,broadcast,0,-1,44426,parameters
//   1,1764138000.130000,,send,1,2,1048576,gradients
//
// Contract:
//  - post(op, src, dst, bytes) appends a row stamped with the clock (Unix seconds) and the calling
//    thread's current category (MessageCategoryScope), and returns its index: 0, 1, ... in post
//    order. markDone(index) stamps t_done once (a second call keeps the first stamp); an index
//    never returned by post() throws std::out_of_range.
//  - Thread-safe: the training thread and the communication thread post and mark concurrently.
//  - writeCsv writes the header and every row in post order; times with 6 decimals, t_done empty
//    for an operation whose wait() never returned.
//
// Categories: a thread's category is `control` until a MessageCategoryScope sets another; scopes
// nest (the destructor restores the category before it) and each thread has its own.

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <vector>

#include "common/named_values.h"

namespace dtbench::comm {

enum class MessageOp { kSend, kRecv, kAllreduce, kBroadcast, kAllgather, kBarrier };
// kInitial: the initial or resumed parameters broadcast from rank 0 (a native collective, counted 0);
// kParameters: parameters exchanged by --sync pairavg (point-to-point, counted).
enum class MessageCategory { kGradients, kBuffers, kInitial, kParameters, kControl };

const common::NamedValues<MessageOp>& messageOpNames();              // send recv allreduce broadcast allgather barrier
const common::NamedValues<MessageCategory>& messageCategoryNames();  // gradients buffers initial parameters control

// The calling thread's category (control unless a scope set another).
MessageCategory currentMessageCategory();

class MessageCategoryScope {
 public:
  explicit MessageCategoryScope(MessageCategory category);
  ~MessageCategoryScope();
  MessageCategoryScope(const MessageCategoryScope&) = delete;
  MessageCategoryScope& operator=(const MessageCategoryScope&) = delete;

 private:
  MessageCategory previous_;
};

struct MessageRow {
  int64_t index = 0;
  double tPostS = 0;
  std::optional<double> tDoneS;
  MessageOp op = MessageOp::kSend;
  int src = 0;
  int dst = 0;  // -1 for collectives
  int64_t bytes = 0;
  MessageCategory category = MessageCategory::kControl;
};

class MessageLog {
 public:
  using Clock = std::function<double()>;  // Unix seconds

  // `clock`: common::unixSeconds unless a test gives another.
  explicit MessageLog(int rank, Clock clock = {});
  int rank() const { return rank_; }

  int64_t post(MessageOp op, int src, int dst, int64_t bytes);
  void markDone(int64_t index);

  std::vector<MessageRow> rows() const;  // a copy, in post order
  void writeCsv(std::ostream& out) const;

 private:
  int rank_;
  Clock clock_;
  mutable std::mutex mutex_;
  std::vector<MessageRow> rows_;
};

}  // namespace dtbench::comm
