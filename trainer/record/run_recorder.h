#pragma once
// RunRecorder: what a run writes into its directory while it trains (docs/run-directory.md), and
// the collectives that bring every rank's share to rank 0, which alone writes:
//   - every step: the rank keeps its StepRecord; rank 0 appends its "Batch" line to
//     train_history.log and adds the step's gradient ready times to its StepProfile;
//   - gatherEpoch (collective; at every epoch end and before every checkpoint): every rank's
//     batches.csv rows and trace events not yet sent reach rank 0, which writes the rows and returns
//     the epoch's figures so far over every rank (its own times; loss, accuracy and samples of all);
//   - endEpoch: the epoch's "Epoch" line and summary.json with the epoch's figures;
//   - finish (collective; when the run ends, completed or interrupted): traffic.csv and
//     traffic_timeline.csv (this launch's bytes only, so summary.json's traffic_first_step and
//     traffic_last_step say which steps they cover), every rank's parameter checksum, step_profile.json (the steps this
//     process trained: since the resume after --resume), and with --timeline timeline.json;
//   - writeSummary: summary.json (run/run_summary.h) with the run's outcome (run/run_outcome.h);
//   - with --sample-ledger, every step's dataset indices (addSamples) travel with the rows of
//     gatherEpoch, and rank 0 writes them to each rank's sample_ledger.rank<R>.csv (run/sample_ledger.h).
// Other ranks only collect and send. A checkpoint keeps what the recorder holds (rankState,
// runState) so that --resume continues the same files (restoreRank, restoreRun).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/epoch_stats.h"
#include "run/run_directory.h"
#include "run/run_outcome.h"
#include "run/run_summary.h"
#include "run/sample_ledger.h"
#include "run/step_profile.h"
#include "run/step_record.h"
#include "trainer/config.h"
#include "trainer/step/chrome_trace.h"
#include "trainer/step/gradient_ready.h"
#include "trainer/step/numerics/grad_scaler.h"
#include "trainer/world.h"

#include <c10/core/Device.h>

namespace dtbench::trainer {

class RunRecorder {
 public:
  // `world` is null for one rank; `scaler` (--amp fp16) is null otherwise; `readyProbe` is rank 0's
  // (null elsewhere: no step_profile.json), read at every addStep. All outlive the recorder.
  // `device` is the rank's, whose peak memory the epochs record (trainer/record/peak_memory.h).
  RunRecorder(const RunConfig& config, World* world, c10::Device device, const GradScaler* scaler,
              const GradientReadyProbe* readyProbe = nullptr);

  // Rank 0: the directory it writes (a new one, or the reopened one of --resume).
  void open(run::RunDirectory dir);
  bool writes() const { return dir_.has_value(); }
  run::RunDirectory& directory() { return *dir_; }
  // What summary.json says (rank 0's; other ranks hold an empty one).
  run::RunSummary& summary() { return summary_; }
  const std::vector<run::EpochStats>& epochs() const { return summary_.epochs; }

  // Where the step puts this rank's trace events: null without --timeline.
  std::vector<TraceEvent>* trace() { return config_.timeline ? &trace_ : nullptr; }

  // Rank 0, once the run is set up: a new run writes config.json (`configJson`) and starts
  // summary.json; a resumed one notes when it resumed. Both then say "running".
  void begin(const nlohmann::json& configJson);

  // Every rank once the run's position is known: this launch trains from the global step after
  // `globalStep` (0 for a new run, the checkpoint's for --resume), where its traffic begins.
  void startLaunch(int64_t globalStep) { launchFirstStep_ = globalStep + 1; }

  // --sample-ledger, on every rank once the run's position is known (0 for a new run, the checkpoint's
  // global step for --resume): the facts every ledger row carries. Rank 0 opens the ledger files, a
  // resumed run's cut back to the checkpoint's steps. Nothing without --sample-ledger.
  // `segment`: the run's segment (trainer/checkpoint/checkpointer.h; 0 until a resume at another world size).
  void startSampleLedger(int64_t datasetSize, int64_t epochSteps, int64_t resumedAtStep, int64_t segment = 0);
  // The steps of the epoch about to start, which its rows carry (an epoch continued at another world size
  // has its own count: the steps before the resume and the rest's).
  void setLedgerEpochSteps(int64_t epochSteps) {
    if (ledgerFacts_) ledgerFacts_->epochSteps = epochSteps;
  }
  // The dataset indices of this rank's step, sent with the step's batches.csv row at the next gatherEpoch.
  void addSamples(int64_t epoch, int64_t step, int64_t globalStep, std::vector<int64_t> indices);

  // `readyS`: the step's gradient-ready times, when the step was taken before this call (its phase
  // columns came later: trainer/step/pending_steps.h); null: the probe's latest, this step's; empty: the
  // step took none (replayed from a CUDA graph, where no hook runs), and adds nothing to the profile.
  void addStep(const run::StepRecord& record, int64_t globalStep, const std::vector<double>* readyS = nullptr);
  run::EpochStats gatherEpoch(int64_t epoch, int64_t fullSteps);
  // `stats` from gatherEpoch, with the test accuracy when evaluated.
  void endEpoch(const run::EpochStats& stats);
  // The run's outcome `status` (and `error`, when given), on every rank; rank 0 writes summary.json
  // with it and the time of this write.
  void writeSummary(run::RunOutcome status, const std::string& error = "");
  // Collective. `paramChecksum`: this rank's parameterChecksum().
  void finish(double paramChecksum);
  // Rank 0 after a failure: its own rows not yet written, then status "failed" with the error,
  // written even when the rows cannot be (a full disk). Never throws (the directory may be what
  // failed; the original error is the one to report): a summary it cannot write is said on stderr.
  void recordFailure(const std::string& error);

  // Checkpoints (trainer/checkpoint/checkpointer.h). This rank's steps of the epoch in progress:
  nlohmann::json rankState() const;
  void restoreRank(const nlohmann::json& state);
  // Rank 0: summary, finished epochs and the logs' sizes on disk (after a flush); restoreRun takes the
  // summary (its epochs the finished ones) back, but for traffic_first_step and traffic_last_step, which
  // stay summary.json's: the traffic files on disk may be newer than the checkpoint (an interrupted launch
  // writes them after it).
  nlohmann::json runState();
  void restoreRun(const run::RunSummary& summary);

 private:
  const RunConfig& config_;
  World* world_;
  c10::Device device_;
  const GradScaler* scaler_;
  const GradientReadyProbe* readyProbe_;
  std::optional<run::StepProfile> profile_;  // with readyProbe_: the ready times of this process's steps
  std::optional<run::RunDirectory> dir_;     // rank 0 only
  run::RunSummary summary_;                  // rank 0's; its epochs are the finished ones
  std::vector<run::StepRecord> epochRecords_;  // this rank's steps of the epoch in progress
  size_t rowsWritten_ = 0;                // of epochRecords_, those already sent to batches.csv
  int64_t launchFirstStep_ = 1;           // this launch's first global step (startLaunch)
  int64_t launchLastStep_ = 0;            // the last global step this launch recorded (addStep); 0: none
  std::optional<run::LedgerRow> ledgerFacts_;       // --sample-ledger: what every row repeats
  std::string ledgerRows_;                         // this rank's ledger rows not yet gathered
  std::optional<run::SampleLedgerWriter> ledger_;  // rank 0, --sample-ledger
  std::vector<TraceEvent> trace_;         // this rank's events not yet gathered
  std::vector<TraceEvent> allTrace_;      // rank 0: every rank's events
};

}  // namespace dtbench::trainer
