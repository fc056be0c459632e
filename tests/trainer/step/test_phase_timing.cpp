// --phase-timing: the StepTimer's three modes and the deferred read-back of PendingSteps, on the CPU
// with a fake event source whose marks the test passes by hand (as a device would, later).

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "run/step_record.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/pending_steps.h"
#include "trainer/step/phase_events.h"
#include "trainer/step/step_timer.h"

namespace run = dtbench::run;

using dtbench::run::PhaseTiming;
using dtbench::trainer::PendingStep;
using dtbench::trainer::PendingSteps;
using dtbench::trainer::PhaseEvents;
using dtbench::trainer::PhaseEventSource;
using dtbench::run::StepRecord;
using dtbench::trainer::StepTimer;
using dtbench::trainer::TraceClock;

namespace {

// Marks at times the test sets: mark k is at `k * 0.001 * (k + 1)` seconds plus the set's offset,
// and the device has passed them only once the test says so.
class FakeEvents final : public PhaseEvents {
 public:
  explicit FakeEvents(int id) : id(id) {}
  void mark(size_t index) override {
    REQUIRE(index < kMaxMarks);
    made = std::max(made, index + 1);
  }
  bool passed() override { return devicePassed; }
  void waitPassed() override {
    ++waits;
    if (failOnWait) throw std::runtime_error("the device failed");
    devicePassed = true;
  }
  double secondsBetween(size_t from, size_t to) override {
    REQUIRE(devicePassed);
    REQUIRE(to < made);
    return at(to) - at(from);
  }
  static double at(size_t k) { return 0.001 * static_cast<double>(k * (k + 1)); }

  int id;
  size_t made = 0;
  bool devicePassed = false;
  bool failOnWait = false;
  int waits = 0;
};

class FakeSource final : public PhaseEventSource {
 public:
  std::unique_ptr<PhaseEvents> acquire() override {
    auto e = std::make_unique<FakeEvents>(next++);
    live.push_back(e.get());
    return e;
  }
  void release(std::unique_ptr<PhaseEvents> events) override { released.push_back(std::move(events)); }

  int next = 0;
  std::vector<FakeEvents*> live;  // every set handed out, by id
  std::vector<std::unique_ptr<PhaseEvents>> released;
};

// One step's phases as TrainStep times them: data, h2d, forward, backward, sync (no column), optimizer.
PendingStep timedStep(PhaseTiming timing, PhaseEventSource* source, int64_t globalStep) {
  PendingStep p;
  p.globalStep = globalStep;
  p.record.step = globalStep;
  if (timing == PhaseTiming::kEvents) p.events = source->acquire();
  const TraceClock clock;
  StepTimer timer(c10::Device(c10::kCPU), timing, p.events.get(), p.record, clock, nullptr);
  timer.end("data", &run::StepRecord::dataS);
  timer.end("h2d", &run::StepRecord::h2dS);
  timer.end("forward", &run::StepRecord::forwardS);
  timer.end("backward", &run::StepRecord::backwardS);
  timer.end("sync");
  timer.end("optimizer", &run::StepRecord::optimizerS);
  timer.finish();
  p.phases = timer.deferredPhases();
  return p;
}

// The fake's seconds between marks k-1 and k.
double fakePhase(size_t k) { return FakeEvents::at(k) - FakeEvents::at(k - 1); }

void checkFilledFromMarks(const run::StepRecord& r) {
  CHECK(r.h2dS == Approx(fakePhase(1)));
  CHECK(r.forwardS == Approx(fakePhase(2)));
  CHECK(r.backwardS == Approx(fakePhase(3)));
  CHECK(r.optimizerS == Approx(fakePhase(5)));  // from the end of sync (mark 4) to mark 5
}

}  // namespace

TEST_CASE("under events the timer marks every boundary and leaves the device phases to the marks", "[phase_timing]") {
  FakeSource source;
  PendingStep p = timedStep(PhaseTiming::kEvents, &source, 1);
  auto& events = *source.live.at(0);
  CHECK(events.made == 6);  // data, h2d, forward, backward, sync, optimizer
  CHECK(events.waits == 0);
  CHECK(p.record.dataS >= 0);  // the host's own wait: read at once
  CHECK(std::isnan(p.record.h2dS));
  CHECK(std::isnan(p.record.optimizerS));
  CHECK(p.record.stepS > 0);
  REQUIRE(p.phases.size() == 4);
  events.devicePassed = true;
  dtbench::trainer::fillPhases(p.record, events, p.phases);
  checkFilledFromMarks(p.record);
}

TEST_CASE("under none the device phases stay unmeasured and under sync they are read at once", "[phase_timing]") {
  const PendingStep none = timedStep(PhaseTiming::kNone, nullptr, 1);
  CHECK(none.phases.empty());
  CHECK(none.record.dataS >= 0);
  CHECK(std::isnan(none.record.h2dS));
  CHECK(std::isnan(none.record.forwardS));
  CHECK(std::isnan(none.record.backwardS));
  CHECK(std::isnan(none.record.optimizerS));
  CHECK(dtbench::run::toCsvRow(none.record).find(",,,") != std::string::npos);  // empty cells
  const PendingStep sync = timedStep(PhaseTiming::kSync, nullptr, 1);
  CHECK(sync.phases.empty());
  for (double v : {sync.record.h2dS, sync.record.forwardS, sync.record.backwardS, sync.record.optimizerS}) {
    CHECK(std::isfinite(v));
    CHECK(v >= 0);
  }
}

TEST_CASE("events without a PhaseEvents are refused", "[phase_timing]") {
  run::StepRecord r;
  const TraceClock clock;
  CHECK_THROWS_AS(StepTimer(c10::Device(c10::kCPU), PhaseTiming::kEvents, nullptr, r, clock, nullptr),
                  std::invalid_argument);
}

TEST_CASE("pending steps come out in order once the device passed their marks, without waiting", "[phase_timing]") {
  FakeSource source;
  PendingSteps pending(&source);
  for (int64_t s = 1; s <= 3; ++s) pending.add(timedStep(PhaseTiming::kEvents, &source, s));
  CHECK(pending.takePassed().empty());  // nothing passed yet
  source.live[1]->devicePassed = true;  // the second step's marks, not the first's
  CHECK(pending.takePassed().empty());  // rows keep their order: step 2 waits for step 1
  source.live[0]->devicePassed = true;
  std::vector<PendingStep> out = pending.takePassed();
  REQUIRE(out.size() == 2);
  CHECK(out[0].globalStep == 1);
  CHECK(out[1].globalStep == 2);
  for (const PendingStep& p : out) {
    checkFilledFromMarks(p.record);
    CHECK(p.events == nullptr);
  }
  CHECK(source.released.size() == 2);  // given back for reuse
  CHECK(pending.size() == 1);
  for (FakeEvents* e : source.live) CHECK(e->waits == 0);
}

TEST_CASE("the last steps of an epoch are written by waiting for the device", "[phase_timing]") {
  FakeSource source;
  PendingSteps pending(&source);
  for (int64_t s = 1; s <= 3; ++s) pending.add(timedStep(PhaseTiming::kEvents, &source, s));
  const std::vector<PendingStep> out = pending.takeAll();
  REQUIRE(out.size() == 3);
  for (size_t i = 0; i < out.size(); ++i) {
    CHECK(out[i].globalStep == static_cast<int64_t>(i + 1));
    checkFilledFromMarks(out[i].record);
  }
  CHECK(pending.size() == 0);
}

TEST_CASE("the ring is small: a step beyond it waits for the oldest", "[phase_timing]") {
  FakeSource source;
  PendingSteps pending(&source);
  for (size_t s = 1; s <= PendingSteps::kMaxPending; ++s)
    pending.add(timedStep(PhaseTiming::kEvents, &source, static_cast<int64_t>(s)));
  CHECK(source.live[0]->waits == 0);
  pending.add(timedStep(PhaseTiming::kEvents, &source, PendingSteps::kMaxPending + 1));
  CHECK(source.live[0]->waits == 1);
  CHECK(source.live[1]->waits == 0);
  CHECK(pending.takePassed().size() == 1);
}

TEST_CASE("after a failure the rows still come out, their unreadable phases empty", "[phase_timing]") {
  FakeSource source;
  PendingSteps pending(&source);
  pending.add(timedStep(PhaseTiming::kEvents, &source, 1));
  pending.add(timedStep(PhaseTiming::kEvents, &source, 2));
  source.live[1]->failOnWait = true;
  const std::vector<PendingStep> out = pending.takeAllAfterFailure();
  REQUIRE(out.size() == 2);
  checkFilledFromMarks(out[0].record);
  CHECK(std::isnan(out[1].record.forwardS));
  CHECK(out[1].record.stepS > 0);
  CHECK(pending.size() == 0);
}

TEST_CASE("steps without events pass at once", "[phase_timing]") {
  PendingSteps pending(nullptr);
  pending.add(timedStep(PhaseTiming::kSync, nullptr, 1));
  pending.add(timedStep(PhaseTiming::kNone, nullptr, 2));
  CHECK(pending.takePassed().size() == 2);
}

TEST_CASE("the host clock's marks are passed when made and measure the time between them", "[phase_timing]") {
  const auto source = dtbench::trainer::hostClockEvents();
  auto events = source->acquire();
  events->mark(0);
  events->mark(1);
  CHECK(events->passed());
  CHECK(events->secondsBetween(0, 1) >= 0);
  CHECK_THROWS(events->mark(PhaseEvents::kMaxMarks));
  CHECK_THROWS_AS(dtbench::trainer::cudaPhaseEvents(c10::Device(c10::kCPU)), std::invalid_argument);
}
