#include "trainer/record/speed_of_light.h"

#include <ATen/Context.h>

#include "models/flop_count.h"
#include "models/registry.h"
#include "trainer/record/gemm_probe.h"

namespace dtbench::trainer {

run::ModelFlops modelFlops(const models::FlopCount& count) {
  run::ModelFlops flops;
  flops.forward = count.forwardFlops();
  flops.trainingConvolution = 2.0 * static_cast<double>(count.trainingMacs("convolution"));
  flops.trainingLinear = 2.0 * static_cast<double>(count.trainingMacs("linear"));
  flops.elementwise = static_cast<double>(count.elementwiseOps);
  return flops;
}

std::optional<run::SpeedOfLight> describeSpeedOfLight(const RunConfig& config, const data::Dataset& train,
                                                      c10::Device device, const run::DeviceFacts& rank0) {
  if (train.images.dim() != 4 || train.images.size(2) != train.images.size(3)) return std::nullopt;
  models::ModelOptions options;
  options.inputChannels = train.channels();
  options.numClasses = train.numClasses;
  const models::ClassifierPtr model = models::makeModel(config.model, options);
  const run::ModelFlops flops =
      modelFlops(models::countFlops(*model, options.inputChannels, train.images.size(2), options.numClasses));
  if (device.is_cuda())
    return run::gpuSpeedOfLight(flops, config.precision.amp, at::globalContext().allowTF32CuDNN(),
                                at::globalContext().allowTF32CuBLAS(), rank0);
  const std::optional<std::string> cache = gemmProbeCacheDirectory();
  return run::cpuSpeedOfLight(flops, config.precision.amp, probeGemm(cache.value_or(""), rank0.bootId));
}

}  // namespace dtbench::trainer
