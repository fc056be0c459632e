#include "trainer/sync/pair_averaging.h"

#include <utility>

#include <algorithm>
#include <cstddef>
#include <string>

#include "comm/point_to_point.h"
#include "comm/traffic/counting_point_to_point.h"
#include "comm/traffic/message_log.h"
#include "comm/work.h"
#include "trainer/sync/flat_tensors.h"
#include "trainer/sync/pair_matching.h"

namespace dtbench::trainer {
namespace {

constexpr int kExchangeTag = 1;

}  // namespace

PairAveraging::PairAveraging(torch::nn::Module& model, comm::Communicator& communicator,
                             comm::TrafficRecorder& recorder, CommWorker& worker, uint64_t seed,
                             const comm::Impairment& impairment, comm::HoldBounds holdBounds)
    : communicator_(communicator), recorder_(recorder), worker_(worker), seed_(seed) {
  if (impairment.active())
    impaired_ = std::make_unique<comm::ImpairedPointToPoint>(communicator, impairment, std::move(holdBounds));
  tensors_ = model.parameters();
  for (const at::Tensor& b : floatingBuffers(model)) tensors_.push_back(b);
  mine_ = at::empty({totalElements(tensors_)}, at::kFloat);
  theirs_ = at::empty({totalElements(tensors_)}, at::kFloat);
  flag_ = at::zeros({1}, at::kFloat);
}

void PairAveraging::beforeBackward(int64_t globalStep, bool stopRequested) {
  partner_ = pairPartners(communicator_.size(), seed_, globalStep)[static_cast<size_t>(communicator_.rank())];
  flag_.fill_(stopRequested ? 1.0f : 0.0f);
  worker_.submit("stop agreement", [this] {
    communicator_.allreduce(flag_, comm::ReduceOp::kSum)->wait();
    recorder_.recordModelledAllreduce(static_cast<int64_t>(flag_.nbytes()));
  });
  if (partner_ >= 0) {
    const int partner = partner_;
    worker_.submit("pair " + std::to_string(std::min(partner, communicator_.rank())) + "-" +
                       std::to_string(std::max(partner, communicator_.rank())),
                   [this, partner] { exchange(partner); });
  }
}

void PairAveraging::exchange(int partner) {
  packInto(tensors_, mine_);
  comm::PointToPoint& transport = impaired_ ? static_cast<comm::PointToPoint&>(*impaired_) : communicator_;
  comm::CountingPointToPoint counting(transport, recorder_);
  const comm::MessageCategoryScope category(comm::MessageCategory::kParameters);
  // Both sides post both operations before waiting: neither order can deadlock.
  comm::WorkPtr sent = counting.send(mine_, partner, kExchangeTag);
  comm::WorkPtr received = counting.recv(theirs_, partner, kExchangeTag);
  received->wait();
  sent->wait();
}

SyncResult PairAveraging::afterBackward() {
  SyncResult result;
  result.intervals = worker_.drain();
  result.stopAgreed = flag_.item<float>() > 0.5f;
  if (partner_ >= 0) {
    mine_.add_(theirs_).mul_(0.5);
    unpackFrom(mine_, tensors_);
  }
  return result;
}

}  // namespace dtbench::trainer
