#include "comm/work.h"

#include <cstdio>

namespace dtbench::comm {
namespace {

class CompletedWork final : public Work {
 public:
  void wait() override {}
  bool isCompleted() override { return true; }
};

}  // namespace

std::chrono::milliseconds Deadline::remaining() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now());
  return left.count() < 1 ? std::chrono::milliseconds(1) : left;
}

std::string Deadline::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f s (--timeout)", static_cast<double>(timeout_.count()) / 1000.0);
  return text;
}

WorkPtr completedWork() { return std::make_shared<CompletedWork>(); }

void waitAll(const std::vector<WorkPtr>& works) {
  for (const WorkPtr& work : works) work->wait();
}

}  // namespace dtbench::comm
