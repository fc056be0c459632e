#include "trainer/config.h"

#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "common/lists.h"
#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "models/registry.h"
#include "run/compression.h"
#include "run/config_schema.h"
#include "trainer/cuda_graph_refusal.h"
#include "trainer/thread_share.h"

namespace dtbench::trainer {
namespace {

using common::UsageError;

template <typename T>
void require(bool ok, const std::string& flag, const std::string& rule, const T& got) {
  if (ok) return;
  std::ostringstream message;
  message << flag << " must be " << rule << ", got " << got;
  throw UsageError(message.str());
}

}  // namespace

void validate(const RunConfig& config) {
  const DataConfig& d = config.data;
  const bool cuda = config.device == DeviceKind::kCuda;
  if (!models::isModelName(config.model))
    throw UsageError("unknown model '" + config.model +
                     "' (--model); valid models: " + common::joinList(models::modelNames()));
  run::checkRules(config);  // each setting's own rule (run/config_schema.h)
  // More intra-op threads than cores only contend for them; 100000 would hang starting them.
  const int cores = availableCores();
  require(config.threads >= 0 && config.threads <= cores, "--threads",
          "in [0, " + std::to_string(cores) + "], the cores this process may run on (0 = its share of them)", config.threads);
  if (config.precision.amp == Amp::kFp16 && !cuda)
    throw UsageError(
        "--amp fp16 needs --device cuda: dtbench runs fp16 autocast with loss scaling on GPUs only; "
        "use --amp bf16 on the CPU, or fp16 on a GPU");
  if (d.onDevice && !cuda)
    throw UsageError("--data-on-device needs a CUDA device: use it with --device cuda on a machine with a GPU");
  if (d.download && d.dataset != DatasetKind::kCifar10)
    throw UsageError(
        "--download fetches CIFAR-10 only (--dataset cifar10), got --dataset " +
        std::string(datasetNames().name(d.dataset)) +
        (d.dataset == DatasetKind::kFashionMnist ? "; install Debian's dataset-fashion-mnist instead" : ""));
  if (config.outDir.empty()) throw UsageError("--out is required: the run directory to write");
  require(config.worldSize() >= 1 && config.rank() >= 0 && config.rank() < config.worldSize(), "the rank",
          "in [0, world size)", std::to_string(config.rank()) + " of " + std::to_string(config.worldSize()));
  if (const std::string problem = comm::checkImpairment(config.impairment); !problem.empty()) throw UsageError(problem);
  if (config.impairment.active() && config.sync.kind == Sync::kSsgd && config.comm.topology.native())
    throw UsageError(
        "--inject-* acts in dtbench's own point-to-point layer, and with --topology native the backend "
        "moves the bytes itself: pick a point-to-point topology (ring, tree, star, ...) or pairavg");
  if (config.sync.checkEvery > 0 && config.sync.kind != Sync::kSsgd)
    throw UsageError("--check-every compares parameters across ranks, which only --sync ssgd keeps identical");
  run::checkCompression(config);
  const comm::Backend backend = config.comm.connection.backend;
  if (comm::backendRow(backend).needsCuda && !cuda)
    throw UsageError("--backend " + std::string(comm::name(backend)) + " communicates between GPUs: use it with "
                     "--device cuda (or a backend that communicates from the CPU with --device cpu)");
  comm::checkBackendRunsTopology(
      backend, config.sync.kind == Sync::kPairavg ? "--sync pairavg" : "--topology " + config.comm.topology.name(),
      config.sync.kind == Sync::kPairavg || !config.comm.topology.native());
  if (config.mode == ParallelMode::kDp && config.worldSize() > 1)
    throw UsageError("--mode dp is one process driving every local GPU; start it once, not under a launcher with " +
                     std::to_string(config.worldSize()) + " ranks");
  if (config.mode == ParallelMode::kDp && !DTBENCH_TORCH_HAS_CUDA)
    throw UsageError(
        "--mode dp (single-process DataParallel over local GPUs): this build of LibTorch has no CUDA; "
        "build dtbench against a CUDA LibTorch, or use one process per rank (dtbench launch)");
  if (config.mode == ParallelMode::kDp && !cuda)
    throw UsageError("--mode dp (single-process DataParallel) needs --device cuda and a CUDA build of LibTorch");
  if (config.gpu.cudaGraph)
    if (const std::string why = cudaGraphRefusal(config); !why.empty()) throw UsageError(why);
}

}  // namespace dtbench::trainer
