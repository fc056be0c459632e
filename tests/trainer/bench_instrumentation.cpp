// bench_instrumentation: what dtbench's own per-step bookkeeping costs, measured in isolation, so
// that docs/benchmarks.md can state it beside the step times it is part of. Built by CMake, not
// run by CTest. Usage: bench_instrumentation [--steps N] [--dir D]
//
// Timed, per training step of a single-rank run, with the calls the trainer makes:
//  - timer:   StepTimer over the step's phases (construction, 5 ends, finish; no --timeline), the
//             part that lies inside step_s;
//  - history: RunRecorder's per-step train_history.log row (RunDirectory::appendHistory), after
//             step_s ends;
//  - batches: the step's batches.csv row (toCsvRow + appendBatchRows), written at the epoch's end;
//  - flush:   RunDirectory::flush() once per `--steps-per-epoch` steps, amortized per step;
//  - ready:   the GradientReadyProbe (step_profile.json) on as many parameters as ResNet-18 has (62),
//             of one element each: a backward that reaches each once with the probe armed, less the
//             same backward with no probe (its hooks removed), alternating in blocks of 100 (inside
//             step_s; `--steps` / 10 backwards each way);
//  - profile: StepProfile::add of those 62 ready times (after step_s).
// Prints one CSV line per part: part,steps,total_s,per_step_us. The run directory is a fresh
// temporary one (removed at the end) unless --dir is given.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <c10/core/Device.h>

#include "common/clock.h"
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include "models/registry.h"
#include "run/run_directory.h"
#include "run/step_profile.h"
#include "run/step_record.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/gradient_ready.h"
#include "trainer/step/step_timer.h"

namespace run = dtbench::run;

namespace {

using dtbench::run::StepRecord;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

void print(const char* part, int64_t steps, double total) {
  std::printf("%s,%lld,%.6f,%.3f\n", part, static_cast<long long>(steps), total, total / static_cast<double>(steps) * 1e6);
}

}  // namespace

int main(int argc, char** argv) try {
  int64_t steps = 200000;
  int64_t stepsPerEpoch = 391;  // CIFAR-10 at batch 128
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    if (arg == "--steps") steps = std::stoll(argv[++i]);
    else if (arg == "--steps-per-epoch") stepsPerEpoch = std::stoll(argv[++i]);
    else if (arg == "--dir") dir = argv[++i];
    else throw std::invalid_argument("unknown option " + arg + " (--steps N, --steps-per-epoch N, --dir D)");
  }
  if (steps < 1 || stepsPerEpoch < 1) throw std::invalid_argument("--steps and --steps-per-epoch must be >= 1");
  const bool temporary = dir.empty();
  if (temporary) dir = (std::filesystem::temp_directory_path() / ("bench_instrumentation." + std::to_string(::getpid()))).string();

  std::printf("part,steps,total_s,per_step_us\n");
  {
    const dtbench::trainer::TraceClock clock;
    std::vector<run::StepRecord> records(static_cast<size_t>(steps));
    const Clock::time_point start = Clock::now();
    for (run::StepRecord& r : records) {
      dtbench::trainer::StepTimer timer(c10::Device(c10::kCPU), dtbench::run::PhaseTiming::kSync, nullptr, r, clock, nullptr);
      timer.end("data", &run::StepRecord::dataS);
      timer.end("h2d", &run::StepRecord::h2dS);
      timer.end("forward", &run::StepRecord::forwardS);
      timer.end("backward", &run::StepRecord::backwardS);
      timer.end("optimizer", &run::StepRecord::optimizerS);
      timer.finish();
    }
    print("timer", steps, seconds(start));
  }
  {
    dtbench::run::RunDirectory run(dir);
    run::StepRecord r;
    r.samples = 128;
    r.stepS = 0.5;
    r.loss = 2.302585;
    r.accuracy = 0.1015625;
    Clock::time_point start = Clock::now();
    for (int64_t s = 0; s < steps; ++s)
      run.appendHistory({dtbench::common::unixSeconds(), dtbench::run::HistoryRowType::kBatch, 0, s + 1, r.loss, r.accuracy, r.samples / r.stepS});
    print("history", steps, seconds(start));
    double flushTotal = 0;
    start = Clock::now();
    std::string rows;
    for (int64_t s = 0; s < steps; ++s) {
      r.step = s % stepsPerEpoch + 1;
      r.epoch = s / stepsPerEpoch;
      rows += dtbench::run::toCsvRow(r) + '\n';
      if (r.step == stepsPerEpoch || s + 1 == steps) {
        run.appendBatchRows(rows);
        rows.clear();
        const Clock::time_point flushStart = Clock::now();
        run.flush();
        flushTotal += seconds(flushStart);
      }
    }
    print("batches", steps, seconds(start) - flushTotal);
    print("flush", steps, flushTotal);
  }
  {
    // As many parameters as ResNet-18 has (62), each of one element, so that backward costs little
    // beside the hooks: the probe's cost is the difference between the two timings.
    struct Parameters : torch::nn::Module {
      explicit Parameters(size_t n) {
        for (size_t i = 0; i < n; ++i) register_parameter("p" + std::to_string(i), torch::ones({1}));
      }
    } model(dtbench::models::makeModel("resnet18")->module().parameters().size());
    const std::vector<at::Tensor> parameters = model.parameters();
    const auto backward = [&] {
      at::Tensor loss = at::zeros({});
      for (const at::Tensor& p : parameters) loss = loss + p.sum();
      loss.backward();
    };
    const int64_t rounds = std::max<int64_t>(1, steps / 1000);  // blocks of 100 each way: steps / 10 backwards each
    double with = 0, without = 0, profileTotal = 0;
    std::optional<dtbench::run::StepProfile> profile;
    for (int64_t r = 0; r < rounds; ++r) {
      {
        dtbench::trainer::GradientReadyProbe probe(model);  // hooks on for this block only
        if (!profile) profile.emplace(probe.parameters(), probe.bufferElements());
        Clock::time_point start = Clock::now();
        for (int i = 0; i < 100; ++i) {
          probe.arm();
          backward();
          probe.disarm();
        }
        with += seconds(start);
        start = Clock::now();
        for (int i = 0; i < 100; ++i) profile->add(0.01, probe.readyS());
        profileTotal += seconds(start);
      }
      const Clock::time_point start = Clock::now();
      for (int i = 0; i < 100; ++i) backward();  // no hooks
      without += seconds(start);
    }
    print("ready", rounds * 100, with - without);
    print("profile", rounds * 100, profileTotal);
  }
  if (temporary) std::filesystem::remove_all(dir);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_instrumentation: " << e.what() << "\n";
  return 2;
}
