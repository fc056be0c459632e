#pragma once
// ProgressLine: the one-line progress display on stderr (epoch, step/total, loss, images/s, ETA),
// redrawn in place at most ten times a second. Silent when stderr is not a terminal (logs of
// batch jobs stay clean) or when the user asked for --quiet.

#include <chrono>
#include <cstdint>

namespace dtbench::trainer {

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  ~ProgressLine();

  void update(int64_t epoch, int64_t epochs, int64_t step, int64_t steps, double loss, double imagesPerSec,
              double etaSeconds);
  void clear();  // erases the line before other output

  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
};

}  // namespace dtbench::trainer
