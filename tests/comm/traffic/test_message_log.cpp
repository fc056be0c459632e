// The message log as data (comm/traffic/message_log.h): rows in post order with consecutive
// indices, the calling thread's category (scopes nest and each thread has its own), done stamps,
// the CSV byte for byte, and concurrent posts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/traffic/message_log.h"
#include "common/usage_error.h"

using namespace dtbench::comm;

namespace {

// start, start + step, ...: one tick per reading (exact binary fractions, so the text is exact).
MessageLog::Clock ticking(double start = 100.0, double step = 0.5) {
  auto next = std::make_shared<double>(start);
  return [next, step] {
    const double now = *next;
    *next += step;
    return now;
  };
}

}  // namespace

TEST_CASE("message log rows keep post order and consecutive indices", "[message_log]") {
  MessageLog log(1, ticking());
  CHECK(log.rank() == 1);
  CHECK(log.post(MessageOp::kSend, 1, 2, 64) == 0);
  CHECK(log.post(MessageOp::kRecv, 2, 1, 64) == 1);
  CHECK(log.post(MessageOp::kAllreduce, 1, -1, 1024) == 2);
  const std::vector<MessageRow> rows = log.rows();
  REQUIRE(rows.size() == 3);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].index == static_cast<int64_t>(i));
  CHECK(rows[0].op == MessageOp::kSend);
  CHECK(rows[0].src == 1);
  CHECK(rows[0].dst == 2);
  CHECK(rows[1].op == MessageOp::kRecv);
  CHECK(rows[1].src == 2);
  CHECK(rows[2].dst == -1);
  CHECK(rows[2].bytes == 1024);
  CHECK(rows[0].tPostS == 100.0);
  CHECK(rows[2].tPostS == 101.0);
  for (const MessageRow& row : rows) CHECK_FALSE(row.tDoneS.has_value());
}

TEST_CASE("message log categories come from the calling thread's scope and nest", "[message_log]") {
  MessageLog log(0, ticking());
  CHECK(currentMessageCategory() == MessageCategory::kControl);
  log.post(MessageOp::kBarrier, 0, -1, 0);
  {
    const MessageCategoryScope gradients(MessageCategory::kGradients);
    log.post(MessageOp::kAllreduce, 0, -1, 8);
    {
      const MessageCategoryScope buffers(MessageCategory::kBuffers);
      CHECK(currentMessageCategory() == MessageCategory::kBuffers);
      log.post(MessageOp::kBroadcast, 0, -1, 8);
    }
    CHECK(currentMessageCategory() == MessageCategory::kGradients);
    log.post(MessageOp::kSend, 0, 1, 8);
  }
  CHECK(currentMessageCategory() == MessageCategory::kControl);
  log.post(MessageOp::kAllgather, 0, -1, 4);
  const std::vector<MessageRow> rows = log.rows();
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].category == MessageCategory::kControl);
  CHECK(rows[1].category == MessageCategory::kGradients);
  CHECK(rows[2].category == MessageCategory::kBuffers);
  CHECK(rows[3].category == MessageCategory::kGradients);
  CHECK(rows[4].category == MessageCategory::kControl);
}

TEST_CASE("message log categories are per thread", "[message_log]") {
  MessageLog log(0);
  const MessageCategoryScope parameters(MessageCategory::kParameters);
  MessageCategory seenByOther = MessageCategory::kGradients;
  std::thread other([&] {
    seenByOther = currentMessageCategory();
    const MessageCategoryScope gradients(MessageCategory::kGradients);
    log.post(MessageOp::kSend, 0, 1, 4);
  });
  other.join();
  log.post(MessageOp::kRecv, 1, 0, 4);
  CHECK(seenByOther == MessageCategory::kControl);
  CHECK(currentMessageCategory() == MessageCategory::kParameters);
  const std::vector<MessageRow> rows = log.rows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].category == MessageCategory::kGradients);
  CHECK(rows[1].category == MessageCategory::kParameters);
}

TEST_CASE("message log done stamps are set once and need a posted index", "[message_log]") {
  MessageLog log(0, ticking());
  log.post(MessageOp::kSend, 0, 1, 4);  // 100.0
  log.post(MessageOp::kRecv, 1, 0, 4);  // 100.5
  log.markDone(1);                      // 101.0
  log.markDone(1);                      // a second wait: the first stamp stays
  log.markDone(0);                      // 101.5 (the second markDone read no clock)
  const std::vector<MessageRow> rows = log.rows();
  REQUIRE(rows[1].tDoneS.has_value());
  CHECK(*rows[1].tDoneS == 101.0);
  REQUIRE(rows[0].tDoneS.has_value());
  CHECK(*rows[0].tDoneS == 101.5);
  CHECK_THROWS_AS(log.markDone(2), std::out_of_range);
  CHECK_THROWS_AS(log.markDone(-1), std::out_of_range);
}

TEST_CASE("message log CSV text is exact", "[message_log]") {
  MessageLog log(2, ticking(1764138000.125, 0.25));
  {
    const MessageCategoryScope initial(MessageCategory::kInitial);
    log.post(MessageOp::kBroadcast, 0, -1, 44426);
  }
  log.markDone(0);
  {
    const MessageCategoryScope gradients(MessageCategory::kGradients);
    log.post(MessageOp::kSend, 2, 0, 1048576);
    log.post(MessageOp::kRecv, 1, 2, 1048576);
  }
  log.post(MessageOp::kBarrier, 2, -1, 0);
  log.markDone(3);
  std::ostringstream out;
  log.writeCsv(out);
  CHECK(out.str() ==
        "index,t_post_s,t_done_s,op,src,dst,bytes,category\n"
        "0,1764138000.125000,1764138000.375000,broadcast,0,-1,44426,initial\n"
        "1,1764138000.625000,,send,2,0,1048576,gradients\n"
        "2,1764138000.875000,,recv,1,2,1048576,gradients\n"
        "3,1764138001.125000,1764138001.375000,barrier,2,-1,0,control\n");
}

TEST_CASE("message op and category names round-trip", "[message_log]") {
  CHECK(messageOpNames().names() ==
        std::vector<std::string>{"send", "recv", "allreduce", "broadcast", "allgather", "barrier"});
  CHECK(messageCategoryNames().names() == std::vector<std::string>{"gradients", "buffers", "initial", "parameters", "control"});
  CHECK(messageCategoryNames().parse("buffers") == MessageCategory::kBuffers);
  CHECK_THROWS_AS(messageOpNames().parse("reduce"), dtbench::common::UsageError);
}

TEST_CASE("concurrent posts from two threads get unique consecutive indices", "[message_log]") {
  MessageLog log(0);
  constexpr int kPerThread = 5000;
  std::vector<int64_t> first, second;
  const auto poster = [&log](std::vector<int64_t>& indices, MessageCategory category) {
    const MessageCategoryScope scope(category);
    for (int i = 0; i < kPerThread; ++i) {
      indices.push_back(log.post(MessageOp::kSend, 0, 1, i));
      log.markDone(indices.back());
    }
  };
  std::thread a(poster, std::ref(first), MessageCategory::kGradients);
  std::thread b(poster, std::ref(second), MessageCategory::kBuffers);
  a.join();
  b.join();
  std::vector<int64_t> all = first;
  all.insert(all.end(), second.begin(), second.end());
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == 2 * kPerThread);
  for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == static_cast<int64_t>(i));
  CHECK(std::is_sorted(first.begin(), first.end()));
  CHECK(std::is_sorted(second.begin(), second.end()));
  const std::vector<MessageRow> rows = log.rows();
  REQUIRE(rows.size() == 2 * kPerThread);
  for (int64_t index : first) CHECK(rows[static_cast<size_t>(index)].category == MessageCategory::kGradients);
  for (int64_t index : second) CHECK(rows[static_cast<size_t>(index)].category == MessageCategory::kBuffers);
  for (const MessageRow& row : rows) CHECK(row.tDoneS.has_value());
  for (size_t i = 1; i < rows.size(); ++i) CHECK(rows[i - 1].tPostS <= rows[i].tPostS);
}
