#pragma once
// PhaseClock: times the consecutive phases of a step with the steady clock.
//
// lap() returns the seconds since the previous lap (or since start()). On a CUDA device the
// clock first waits for the device, so a phase's time is the time its kernels took, not the
// time it took to queue them. (CUDA-event timing, which avoids that wait, belongs to the GPU path.)

#include <chrono>

#include <c10/core/Device.h>

namespace dtbench::trainer {

class PhaseClock {
 public:
  explicit PhaseClock(c10::Device device) : syncDevice_(device.is_cuda()) {}

  void start() { last_ = now(); }

  // The moment of the last lap (or start()).
  std::chrono::steady_clock::time_point last() const { return last_; }

  double lap() {
    const auto t = now();
    const double seconds = std::chrono::duration<double>(t - last_).count();
    last_ = t;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point now() const;

  bool syncDevice_;
  std::chrono::steady_clock::time_point last_{};
};

// Unix time in seconds, as train_history.log and the JSON files record it.
double unixSeconds();

}  // namespace dtbench::trainer
