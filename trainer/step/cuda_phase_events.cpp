// cudaPhaseEvents (trainer/step/phase_events.h): timing CUDA events recorded on the current stream.
// compat::CudaEvent creates its event lazily at the first record (cudaEventDefault: timing on),
// so a reused set allocates nothing; elapsed_time() needs both events completed, which passed()
// checks with query(), never with a synchronization.

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include "compat/cuda_compat.h"
#include "trainer/step/phase_events.h"

namespace dtbench::trainer {

namespace {

class CudaMarks final : public PhaseEvents {
 public:
  explicit CudaMarks(c10::Device device) : device_(device) {
    events_.reserve(kMaxMarks);
    for (size_t i = 0; i < kMaxMarks; ++i) events_.emplace_back(cudaEventDefault);  // timing on
  }

  void mark(size_t index) override {
    TORCH_CHECK(index < kMaxMarks, "phase mark ", index, " is beyond the ", kMaxMarks, " a step may make");
    const c10::cuda::CUDAGuard guard(device_);
    events_[index].record(c10::cuda::getCurrentCUDAStream(device_.index()));
    made_ = std::max(made_, index + 1);
  }
  bool passed() override {
    for (size_t i = 0; i < made_; ++i)
      if (!events_[i].query()) return false;
    return true;
  }
  void waitPassed() override {
    for (size_t i = 0; i < made_; ++i) events_[i].synchronize();
  }
  double secondsBetween(size_t from, size_t to) override {
    return static_cast<double>(events_.at(from).elapsed_time(events_.at(to))) / 1000.0;
  }
  void reset() { made_ = 0; }

 private:
  c10::Device device_;
  std::vector<compat::CudaEvent> events_;
  size_t made_ = 0;
};

class CudaSource final : public PhaseEventSource {
 public:
  explicit CudaSource(c10::Device device) : device_(device) {}
  std::unique_ptr<PhaseEvents> acquire() override {
    if (free_.empty()) return std::make_unique<CudaMarks>(device_);
    std::unique_ptr<PhaseEvents> events = std::move(free_.back());
    free_.pop_back();
    static_cast<CudaMarks&>(*events).reset();
    return events;
  }
  void release(std::unique_ptr<PhaseEvents> events) override { free_.push_back(std::move(events)); }

 private:
  c10::Device device_;
  std::vector<std::unique_ptr<PhaseEvents>> free_;
};

}  // namespace

std::unique_ptr<PhaseEventSource> cudaPhaseEvents(c10::Device device) {
  if (!device.is_cuda()) throw std::invalid_argument("CUDA phase events need a CUDA device, got " + device.str());
  return std::make_unique<CudaSource>(device);
}

}  // namespace dtbench::trainer
