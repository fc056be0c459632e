#include "comm/traffic/message_log.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/clock.h"

namespace dtbench::comm {
namespace {

thread_local MessageCategory currentCategory = MessageCategory::kControl;

std::string seconds(double value) {
  char text[48];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

}  // namespace

const common::NamedValues<MessageOp>& messageOpNames() {
  static const common::NamedValues<MessageOp> names({"message operation", "message operations"}, "op",
                                                    {{MessageOp::kSend, "send"},
                                                     {MessageOp::kRecv, "recv"},
                                                     {MessageOp::kAllreduce, "allreduce"},
                                                     {MessageOp::kBroadcast, "broadcast"},
                                                     {MessageOp::kAllgather, "allgather"},
                                                     {MessageOp::kBarrier, "barrier"}});
  return names;
}

const common::NamedValues<MessageCategory>& messageCategoryNames() {
  static const common::NamedValues<MessageCategory> names({"message category", "message categories"}, "category",
                                                          {{MessageCategory::kGradients, "gradients"},
                                                           {MessageCategory::kBuffers, "buffers"},
                                                           {MessageCategory::kInitial, "initial"},
                                                           {MessageCategory::kParameters, "parameters"},
                                                           {MessageCategory::kControl, "control"}});
  return names;
}

MessageCategory currentMessageCategory() { return currentCategory; }

MessageCategoryScope::MessageCategoryScope(MessageCategory category) : previous_(currentCategory) {
  currentCategory = category;
}

MessageCategoryScope::~MessageCategoryScope() { currentCategory = previous_; }

MessageLog::MessageLog(int rank, Clock clock) : rank_(rank), clock_(std::move(clock)) {
  if (!clock_) clock_ = &common::unixSeconds;
}

int64_t MessageLog::post(MessageOp op, int src, int dst, int64_t bytes) {
  MessageRow row;
  row.op = op;
  row.src = src;
  row.dst = dst;
  row.bytes = bytes;
  row.category = currentCategory;
  const std::lock_guard<std::mutex> lock(mutex_);
  row.tPostS = clock_();  // under the lock: post order is time order
  row.index = static_cast<int64_t>(rows_.size());
  rows_.push_back(row);
  return row.index;
}

void MessageLog::markDone(int64_t index) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (index < 0 || index >= static_cast<int64_t>(rows_.size()))
    throw std::out_of_range("MessageLog::markDone: no operation " + std::to_string(index) + " was posted");
  MessageRow& row = rows_[static_cast<size_t>(index)];
  if (!row.tDoneS) row.tDoneS = clock_();
}

std::vector<MessageRow> MessageLog::rows() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

void MessageLog::writeCsv(std::ostream& out) const {
  const std::vector<MessageRow> all = rows();
  out << "index,t_post_s,t_done_s,op,src,dst,bytes,category\n";
  for (const MessageRow& r : all)
    out << r.index << ',' << seconds(r.tPostS) << ',' << (r.tDoneS ? seconds(*r.tDoneS) : "") << ','
        << messageOpNames().name(r.op) << ',' << r.src << ',' << r.dst << ',' << r.bytes << ','
        << messageCategoryNames().name(r.category) << '\n';
}

}  // namespace dtbench::comm
