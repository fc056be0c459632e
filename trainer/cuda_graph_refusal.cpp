#include "trainer/cuda_graph_refusal.h"

#include <string>

#include "comm/backends/backend.h"
#include "dtbench/build_config.h"

namespace dtbench::trainer {

std::string cudaGraphRefusal(const RunConfig& config) {
  const std::string no = "--cuda-graph cannot capture this step: ";
  if (config.device != DeviceKind::kCuda) return no + "it needs --device cuda (there is no CUDA work to capture on the CPU)";
  if (!DTBENCH_TORCH_HAS_CUDA) return no + "this build's LibTorch has no CUDA";
  if (config.mode == ParallelMode::kDp)
    return no + "--mode dp replicates the model and scatters the batch on every call; use one process per GPU";
  const comm::Backend backend = config.comm.connection.backend;
  if (config.worldSize() > 1 && !comm::backendRow(backend).onGpuStream)
    return no + "--backend " + comm::backendNames().name(backend) +
           " runs its collectives on the host, which a CUDA graph does not record; use --backend nccl";
  if (config.sync.kind == Sync::kPairavg)
    return no + "--sync pairavg draws each step's partner on the host; use --sync ssgd";
  if (!config.comm.topology.native())
    return no + "--topology " + config.comm.topology.name() +
           " sends point to point from the host; use --topology native (NCCL's own all-reduce)";
  if (config.worldSize() > 1)
    return no + std::to_string(config.worldSize()) +
           " ranks: recording NCCL's all-reduce of the gradient buckets in the graph is not built yet; run one "
           "rank with --cuda-graph, or several without it";
  if (config.precision.amp == Amp::kFp16)
    return no + "--amp fp16's loss scaler checks for inf/NaN on the host and skips steps; use --amp bf16 or off";
  if (config.gpu.phaseTiming == run::PhaseTiming::kSync)
    return no + "--phase-timing sync waits for the device inside the step; use events or none";
  if (config.optimizer.kind != OptimizerKind::kSgd)
    return no + "--optimizer " + optimizerNames().name(config.optimizer.kind) +
           " bakes its learning rate into the kernels it launches; only --optimizer sgd (the fused SGD, its rate in "
           "a device tensor) is captured";
  return "";
}

}  // namespace dtbench::trainer
