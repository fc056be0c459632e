#pragma once
// GradientSync: how a step's ranks are brought together (--sync), between backward and the
// optimizer step (docs/design.md, "Gradient synchronization"):
//   ssgd     BucketedAllreduce (trainer/sync/bucketed_allreduce.h): gradients averaged over all ranks,
//            bucket by bucket during backward, or fused after it with --no-overlap;
//   pairavg  PairAveraging (trainer/sync/pair_averaging.h): parameters and buffers averaged with one
//            partner per step.
//
// The step calls beforeBackward() right before loss.backward() and afterBackward() right after
// it; afterBackward() returns once this rank's tensors are synchronized. Every collective runs on
// the CommWorker, so its interval is measured the same way for every kind: the intervals feed
// comm_total_s and comm_exposed_s. Every rank makes the same calls in the same order.
//
// Preemption rides along (docs/design.md, "Signals, failures and resume"):
// beforeBackward(stopRequested) carries this rank's flag into a sum over ranks that completes with
// the step's collectives; afterBackward() reports whether any rank asked to stop, so all ranks stop
// after the same step.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "trainer/sync/comm_worker.h"

namespace dtbench::trainer {

struct SyncResult {
  std::vector<CommWorker::Interval> intervals;  // this step's collectives
  bool stopAgreed = false;                      // some rank asked to stop after this step
  double compressS = 0;                         // encoding and decoding (--compress), inside the intervals
  int64_t gradCollectives = 0;                  // the gradients' all-reduces issued (0 under pair averaging)
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // globalStep: 1-based count of steps over the whole run (pair averaging's matching uses it).
  virtual void beforeBackward(int64_t globalStep, bool stopRequested) = 0;
  virtual SyncResult afterBackward() = 0;
  // What this rank keeps from step to step besides the model and optimizer (PowerSGD's residuals and
  // factors), as bytes for a checkpoint; "" when nothing. loadState puts it back before the first step
  // (throws std::runtime_error naming `source` when the bytes do not fit this run).
  virtual std::string saveState() const { return {}; }
  virtual void loadState(const std::string& bytes, const std::string& source) {
    if (!bytes.empty()) throw std::runtime_error(source + " holds gradient-synchronization state this run keeps none of");
  }
};

}  // namespace dtbench::trainer
