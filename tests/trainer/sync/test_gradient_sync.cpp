// Gradient synchronization with ranks as threads over in-process Gloo (one HashStore per case):
// N ranks, each with its shard of one batch, end up with the gradient of the whole batch on one
// model, for every topology, bucketed and fused; the stop flag reaches every rank; pair averaging
// averages exactly with its partner and moves bytes only between pairs.
#include "catch_torch.h"
#include "comm/communicator.h"
#include "comm/traffic/traffic_recorder.h"
#include "models/classifier.h"
#include "trainer/sync/bucket_assignment.h"
#include "trainer/sync/gradient_sync.h"

#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "comm/gloo_fixture.h"
#include "models/registry.h"
#include "trainer/sync/bucketed_allreduce.h"
#include "trainer/sync/comm_worker.h"
#include "trainer/sync/flat_tensors.h"
#include "trainer/sync/pair_averaging.h"
#include "trainer/sync/pair_matching.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

using namespace dtbench;

namespace {

constexpr int kSyncWorld = 3;
constexpr int64_t kShard = 4;

models::ClassifierPtr cloneOf(const models::ClassifierPtr& model) {
  return models::cloneClassifier(*model);
}

std::vector<at::Tensor> gradients(torch::nn::Module& model) {
  std::vector<at::Tensor> grads;
  for (const auto& p : model.parameters()) grads.push_back(p.grad().clone());
  return grads;
}

std::vector<at::Tensor> values(torch::nn::Module& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model.parameters()) out.push_back(p.detach().clone());
  return out;
}

// Rank r's samples: rows r, r + N, r + 2N, ... (DistributedSampler's sharding).
at::Tensor shardOf(const at::Tensor& all, int rank) {
  return all.index_select(0, at::arange(rank, all.size(0), kSyncWorld, at::kLong));
}

struct RankResult {
  std::vector<at::Tensor> grads;
  bool stop = false;
  int64_t intervals = 0;
};

// One backward of every rank through BucketedAllreduce.
std::vector<RankResult> synchronizedStep(const models::ClassifierPtr& base, const at::Tensor& images,
                                         const at::Tensor& labels, const std::string& topology, bool overlap,
                                         int stopRank) {
  std::vector<models::ClassifierPtr> replicas;
  for (int r = 0; r < kSyncWorld; ++r) replicas.push_back(cloneOf(base));
  return comm::testing::runGlooRanks<RankResult>(kSyncWorld, [&](comm::Communicator& gloo) {
    const int rank = gloo.rank();
    const comm::HostLayout hosts = comm::hostsFromRanksPerHost(kSyncWorld, 2);
    comm::TrafficRecorder recorder(rank, kSyncWorld);
    comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse(topology), hosts, recorder);
    trainer::CommWorker worker;
    trainer::BucketedAllreduceOptions syncOptions;
    syncOptions.overlap = overlap;
    syncOptions.limits.firstBucketBytes = 4 << 10;  // small caps: LeNet's gradients span several buckets
    syncOptions.limits.bucketBytes = 64 << 10;
    torch::nn::Module& model = replicas[static_cast<size_t>(rank)]->module();
    trainer::BucketedAllreduce sync(model, gloo, allreduce, worker, syncOptions);
    const at::Tensor loss = torch::nn::functional::cross_entropy(replicas[static_cast<size_t>(rank)]->forward(
                                                                     shardOf(images, rank)),
                                                                 shardOf(labels, rank));
    sync.beforeBackward(1, rank == stopRank);
    loss.backward();
    const trainer::SyncResult result = sync.afterBackward();
    return RankResult{gradients(model), result.stopAgreed, static_cast<int64_t>(result.intervals.size())};
  });
}

}  // namespace

TEST_CASE("bucketed and fused all-reduce give every rank the whole batch's gradient", "[sync]") {
  torch::manual_seed(3);
  const models::ClassifierPtr base = models::makeModel("lenet");
  const at::Tensor images = torch::randn({kSyncWorld * kShard, 3, 32, 32});
  const at::Tensor labels = torch::randint(0, 10, {kSyncWorld * kShard}, at::kLong);
  const models::ClassifierPtr whole = cloneOf(base);
  torch::nn::functional::cross_entropy(whole->forward(images), labels).backward();
  const std::vector<at::Tensor> expected = gradients(whole->module());

  for (const std::string& topology : comm::topologyNames()) {
    for (const bool overlap : {true, false}) {
      INFO("topology " << topology << (overlap ? ", overlapped buckets" : ", fused"));
      const int stopRank = overlap ? 1 : -1;
      const std::vector<RankResult> ranks = synchronizedStep(base, images, labels, topology, overlap, stopRank);
      for (int r = 0; r < kSyncWorld; ++r) {
        INFO("rank " << r);
        REQUIRE(ranks[r].grads.size() == expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
          CHECK(at::allclose(ranks[r].grads[i], expected[i], 1e-4, 1e-6));
          CHECK(at::equal(ranks[r].grads[i], ranks[0].grads[i]));  // identical on every rank, bit for bit
        }
        CHECK(ranks[r].stop == (stopRank >= 0));
        // LeNet has no buffers: only gradient collectives, several buckets when overlapped.
        if (overlap) CHECK(ranks[r].intervals > 2);
        else CHECK(ranks[r].intervals == 1);
      }
    }
  }
}

TEST_CASE("pair averaging averages parameters with the step's partner and sends only to it", "[sync]") {
  torch::manual_seed(5);
  const int world = 4;
  const uint64_t seed = 11;
  const int64_t step = 7;
  std::vector<models::ClassifierPtr> replicas;
  for (int r = 0; r < world; ++r) replicas.push_back(models::makeModel("lenet"));  // different weights per rank
  std::vector<std::vector<at::Tensor>> before;
  for (const auto& m : replicas) before.push_back(values(m->module()));
  const std::vector<int> partner = trainer::pairPartners(world, seed, step);
  struct Outcome {
    std::vector<int64_t> sentTo;
    bool stop = false;
  };
  const auto outcomes = comm::testing::runGlooRanks<Outcome>(world, [&](comm::Communicator& gloo) {
    const int rank = gloo.rank();
    comm::TrafficRecorder recorder(rank, world);
    trainer::CommWorker worker;
    trainer::PairAveraging sync(replicas[static_cast<size_t>(rank)]->module(), gloo, recorder, worker, seed);
    sync.beforeBackward(step, rank == 3);
    const trainer::SyncResult result = sync.afterBackward();
    return Outcome{recorder.sentTo(), result.stopAgreed};
  });
  int64_t bytes = 0;
  for (const auto& p : replicas[0]->module().parameters()) bytes += p.numel() * 4;
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r << ", partner " << partner[r]);
    REQUIRE(partner[r] >= 0);
    const std::vector<at::Tensor> after = values(replicas[static_cast<size_t>(r)]->module());
    for (size_t i = 0; i < after.size(); ++i)
      CHECK(at::allclose(after[i], (before[r][i] + before[partner[r]][i]) * 0.5, 1e-6, 1e-7));
    for (int d = 0; d < world; ++d) CHECK(outcomes[r].sentTo[d] == (d == partner[r] ? bytes : 0));
    CHECK(outcomes[r].stop);
  }
}

TEST_CASE("BatchNorm statistics are broadcast from rank 0 without disturbing backward", "[sync]") {
  torch::manual_seed(9);
  torch::nn::Sequential base(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3)), torch::nn::BatchNorm2d(4),
                             torch::nn::ReLU(), torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(),
                             torch::nn::Linear(4, 10));
  const at::Tensor images = torch::randn({kSyncWorld * kShard, 3, 8, 8});
  const at::Tensor labels = torch::randint(0, 10, {kSyncWorld * kShard}, at::kLong);
  std::vector<torch::nn::Sequential> replicas;
  for (int r = 0; r < kSyncWorld; ++r)
    replicas.push_back(std::dynamic_pointer_cast<torch::nn::SequentialImpl>(base->clone()));
  struct Outcome {
    std::vector<at::Tensor> afterForward;  // this rank's buffers as its forward left them
    std::vector<at::Tensor> afterSync;
    std::vector<at::Tensor> grads;
  };
  const auto outcomes = comm::testing::runGlooRanks<Outcome>(kSyncWorld, [&](comm::Communicator& gloo) {
    const int rank = gloo.rank();
    comm::TrafficRecorder recorder(rank, kSyncWorld);
    comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse("ring"), comm::hostsFromRanksPerHost(kSyncWorld, kSyncWorld), recorder);
    trainer::CommWorker worker;
    torch::nn::Sequential& model = replicas[static_cast<size_t>(rank)];
    trainer::BucketedAllreduce sync(*model, gloo, allreduce, worker, trainer::BucketedAllreduceOptions{});
    Outcome outcome;
    for (int step = 1; step <= 3; ++step) {  // several steps: statistics keep moving
      const at::Tensor loss =
          torch::nn::functional::cross_entropy(model->forward(shardOf(images, rank) * step), shardOf(labels, rank));
      outcome.afterForward.clear();
      for (const auto& b : trainer::floatingBuffers(*model)) outcome.afterForward.push_back(b.clone());
      sync.beforeBackward(step, false);
      loss.backward();  // would throw if the running statistics changed under autograd
      sync.afterBackward();
    }
    for (const auto& b : trainer::floatingBuffers(*model)) outcome.afterSync.push_back(b.clone());
    outcome.grads = gradients(*model);
    return outcome;
  });
  for (int r = 0; r < kSyncWorld; ++r) {
    INFO("rank " << r);
    REQUIRE(outcomes[r].afterSync.size() == 2);  // running mean and variance
    for (size_t i = 0; i < outcomes[r].afterSync.size(); ++i)
      CHECK(at::equal(outcomes[r].afterSync[i], outcomes[0].afterForward[i]));
    for (size_t i = 0; i < outcomes[r].grads.size(); ++i) CHECK(at::equal(outcomes[r].grads[i], outcomes[0].grads[i]));
  }
  CHECK_FALSE(at::equal(outcomes[1].afterForward[0], outcomes[0].afterForward[0]));  // shards differ
}

// Note [One intra-op thread off the training thread] (compat/torch_compat.h): the communication
// thread packs buckets with one intra-op thread, whatever the training thread's count.
TEST_CASE("the communication thread runs its ops on one intra-op thread", "[sync]") {
  const int previous = at::get_num_threads();
  at::set_num_threads(2);
  int seen = 0;
  {
    trainer::CommWorker worker;
    worker.submit("threads", [&seen] { seen = at::get_num_threads(); });
    worker.drain();  // happens-before: seen is written
  }
  const int training = at::get_num_threads();
  at::set_num_threads(previous);
  CHECK(seen == 1);
  CHECK(training == 2);
}
