#include "trainer/progress.h"

#include <unistd.h>

#include <cstdio>

namespace dtbench::trainer {

ProgressLine::ProgressLine(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::update(int64_t epoch, int64_t epochs, int64_t step, int64_t steps, double loss,
                          double imagesPerSec, double etaSeconds) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && step != steps && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  lastDraw_ = now;
  const long eta = static_cast<long>(etaSeconds + 0.5);
  std::fprintf(stderr, "\r\033[Kepoch %lld/%lld  step %lld/%lld  loss %.4f  %.1f img/s  ETA %ld:%02ld",
               static_cast<long long>(epoch), static_cast<long long>(epochs), static_cast<long long>(step),
               static_cast<long long>(steps), loss, imagesPerSec, eta / 60, eta % 60);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace dtbench::trainer
