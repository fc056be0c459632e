#include "trainer/step/phase_events.h"

#include <array>
#include <chrono>
#include <stdexcept>
#include <vector>

#include <c10/util/Exception.h>

#include "dtbench/build_config.h"

namespace dtbench::trainer {

namespace {

class HostClockMarks final : public PhaseEvents {
 public:
  void mark(size_t index) override {
    TORCH_CHECK(index < kMaxMarks, "phase mark ", index, " is beyond the ", kMaxMarks, " a step may make");
    at_[index] = std::chrono::steady_clock::now();
  }
  bool passed() override { return true; }
  void waitPassed() override {}
  double secondsBetween(size_t from, size_t to) override {
    return std::chrono::duration<double>(at_.at(to) - at_.at(from)).count();
  }

 private:
  std::array<std::chrono::steady_clock::time_point, kMaxMarks> at_{};
};

class HostClockSource final : public PhaseEventSource {
 public:
  std::unique_ptr<PhaseEvents> acquire() override {
    if (free_.empty()) return std::make_unique<HostClockMarks>();
    std::unique_ptr<PhaseEvents> events = std::move(free_.back());
    free_.pop_back();
    return events;
  }
  void release(std::unique_ptr<PhaseEvents> events) override { free_.push_back(std::move(events)); }

 private:
  std::vector<std::unique_ptr<PhaseEvents>> free_;
};

}  // namespace

std::unique_ptr<PhaseEventSource> hostClockEvents() { return std::make_unique<HostClockSource>(); }

#if !DTBENCH_TORCH_HAS_CUDA
std::unique_ptr<PhaseEventSource> cudaPhaseEvents(c10::Device) {
  throw std::invalid_argument("CUDA phase events: this build's LibTorch has no CUDA");
}
#endif

std::unique_ptr<PhaseEventSource> phaseEventsFor(c10::Device device) {
  return device.is_cuda() ? cudaPhaseEvents(device) : hostClockEvents();
}

}  // namespace dtbench::trainer
