#pragma once
// PairAveraging: --sync pairavg, decentralized pair averaging (docs/design.md, "Gradient
// synchronization"). At every step the ranks are paired by pairPartners(world, seed, step)
// (trainer/sync/pair_matching.h: a seeded perfect matching; with an odd world one rank sits the
// step out); each pair swaps its parameters and floating-point buffers and both sides set them to
// the pair's average, then each rank applies its own gradient step. Deterministic: a run and its
// resumed continuation make the same pairs.
//
// The swap is queued on the CommWorker when backward starts (parameters do not change during
// backward) and overlaps it; afterBackward() waits for it and writes the averages. The pairs move
// their bytes themselves over the communicator's point-to-point (traffic kind "counted"). The stop
// flag needs every rank, so it travels in a one-element all-reduce of its own (recorded as
// modelled traffic).

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/nn/module.h>

#include "comm/communicator.h"
#include "comm/impairment/impaired_point_to_point.h"
#include "comm/impairment/impairment.h"
#include "comm/traffic/traffic_recorder.h"
#include "trainer/sync/comm_worker.h"
#include "trainer/sync/gradient_sync.h"

namespace dtbench::trainer {

class PairAveraging final : public GradientSync {
 public:
  // The module, communicator, recorder and worker outlive this object. An active `impairment`
  // (comm/impairment/impairment.h) holds every pair exchange's send, within `holdBounds`.
  PairAveraging(torch::nn::Module& model, comm::Communicator& communicator, comm::TrafficRecorder& recorder,
                CommWorker& worker, uint64_t seed, const comm::Impairment& impairment = {},
                comm::HoldBounds holdBounds = {});

  void beforeBackward(int64_t globalStep, bool stopRequested) override;
  SyncResult afterBackward() override;

 private:
  void exchange(int partner);

  comm::Communicator& communicator_;
  comm::TrafficRecorder& recorder_;
  std::unique_ptr<comm::ImpairedPointToPoint> impaired_;
  CommWorker& worker_;
  uint64_t seed_;
  std::vector<at::Tensor> tensors_;  // parameters, then floating-point buffers
  at::Tensor mine_;
  at::Tensor theirs_;
  at::Tensor flag_;
  int partner_ = -1;
};

}  // namespace dtbench::trainer
