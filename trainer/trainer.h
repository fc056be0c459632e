#pragma once
// Trainer: one training run of one rank, from configuration to finished run directory.
//
// The step (DESIGN.md, trainer/): wait for data -> host-to-device copy -> forward -> backward ->
// gradient sync -> optimizer step, every phase timed into a StepRecord. A single rank has no
// gradient to synchronize: its communication columns are 0. Each epoch ends with a test-set
// evaluation (unless disabled), a flush of the CSV logs and a new summary.json; the run ends
// with status "completed", or "failed" with the error when anything throws.

#include <memory>

#include <nlohmann/json.hpp>

#include "trainer/config.h"

namespace dtbench::trainer {

class Trainer {
 public:
  // Validates the configuration, loads the data, builds model and optimizer, and creates the run
  // directory. Throws UsageError for bad flags, data::DataError for bad data, std::runtime_error
  // for an unusable run directory.
  explicit Trainer(const RunConfig& config);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains and returns the final summary.json content. On failure the run directory records
  // status "failed" and the error, and the exception propagates.
  nlohmann::json run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dtbench::trainer
