// powersgd_trajectory: dtbench's side of the comparison with PyTorch's powerSGD_hook
// (tests/trainer/sync/test_powersgd_reference.sh). WORLD ranks (default 2) as threads over in-process Gloo train
// LeNet with plain SGD through BucketedAllreduce and --compress powersgd, on batches drawn from
// seeded generators that the Python reference draws again, and write:
//   initial.bin        the parameters before the first step (float32, model.parameters() order),
//   losses.csv         step,rank,loss for every step of every rank,
//   final.bin          rank 0's parameters after the last step.
// Usage: powersgd_trajectory OUTDIR STEPS RANK START SEED [WORLD]
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "comm/gloo_fixture.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic/traffic_recorder.h"
#include "models/registry.h"
#include "trainer/sync/bucketed_allreduce.h"
#include "trainer/sync/comm_worker.h"

using namespace dtbench;

namespace {

constexpr int64_t kBatch = 8;
constexpr double kLr = 0.05;

void writeParameters(const std::string& path, torch::nn::Module& model) {
  std::ofstream out(path, std::ios::binary);
  for (const at::Tensor& p : model.parameters()) {
    const at::Tensor values = p.detach().contiguous();
    out.write(static_cast<const char*>(values.data_ptr()), static_cast<std::streamsize>(values.nbytes()));
  }
}

// The batch of `rank` at `step`: what tests/trainer/sync/powersgd_reference.py draws with
// torch.Generator().manual_seed(1000 * step + rank).
std::pair<at::Tensor, at::Tensor> batchOf(int64_t step, int rank) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(1000 * step + rank));
  at::Tensor images = at::randn({kBatch, 3, 32, 32}, generator, at::TensorOptions(at::kFloat));
  at::Tensor labels = at::randint(0, 10, {kBatch}, generator, at::TensorOptions(at::kLong));
  return {images, labels};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: powersgd_trajectory OUTDIR STEPS RANK START SEED [WORLD]\n");
    return 2;
  }
  const int world = argc == 7 ? std::atoi(argv[6]) : 2;
  if (world < 2 || world > 16) {
    std::fprintf(stderr, "powersgd_trajectory: WORLD must be 2 to 16, got %s\n", argv[6]);
    return 2;
  }
  const std::string out = argv[1];
  const int64_t steps = std::atoll(argv[2]);
  trainer::CompressionOptions compression;
  compression.kind = run::Compression::kPowerSgd;
  compression.rank = std::atoll(argv[3]);
  compression.start = std::atoll(argv[4]);
  compression.seed = std::strtoull(argv[5], nullptr, 10);
  at::set_num_threads(1);
  torch::manual_seed(1);
  const models::ClassifierPtr base = models::makeModel("lenet");
  writeParameters(out + "/initial.bin", base->module());
  std::vector<models::ClassifierPtr> replicas;
  for (int r = 0; r < world; ++r) replicas.push_back(models::cloneClassifier(*base));
  const std::vector<std::vector<double>> losses =
      comm::testing::runGlooRanks<std::vector<double>>(world, [&](comm::Communicator& gloo) {
        const int rank = gloo.rank();
        comm::TrafficRecorder recorder(rank, world);
        comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse("native"),
                                          comm::hostsFromRanksPerHost(world, world), recorder);
        trainer::CommWorker worker;
        trainer::BucketedAllreduceOptions options;
        options.compression = compression;
        torch::nn::Module& model = replicas[static_cast<size_t>(rank)]->module();
        trainer::BucketedAllreduce sync(model, gloo, allreduce, worker, options);
        torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(kLr));
        std::vector<double> mine;
        for (int64_t step = 1; step <= steps; ++step) {
          const auto [images, labels] = batchOf(step, rank);
          optimizer.zero_grad();
          const at::Tensor loss =
              torch::nn::functional::cross_entropy(replicas[static_cast<size_t>(rank)]->forward(images), labels);
          sync.beforeBackward(step, false);
          loss.backward();
          sync.afterBackward();
          optimizer.step();
          mine.push_back(loss.item<double>());
        }
        return mine;
      });
  std::ofstream csv(out + "/losses.csv");
  csv << "step,rank,loss\n";
  for (int64_t step = 1; step <= steps; ++step)
    for (int r = 0; r < world; ++r) {
      char line[96];
      std::snprintf(line, sizeof line, "%lld,%d,%.9g\n", static_cast<long long>(step), r,
                    losses[static_cast<size_t>(r)][static_cast<size_t>(step - 1)]);
      csv << line;
    }
  writeParameters(out + "/final.bin", replicas[0]->module());
  return 0;
}
