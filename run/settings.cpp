#include "run/settings.h"

namespace dtbench::run {

const common::NamedValues<DatasetKind>& datasetNames() {
  static const common::NamedValues<DatasetKind> names({"dataset", "datasets"}, "--dataset",
                                                      {{DatasetKind::kCifar10, "cifar10"},
                                                       {DatasetKind::kFashionMnist, "fashion-mnist"},
                                                       {DatasetKind::kSynthetic, "synthetic"}});
  return names;
}

const common::NamedValues<DeviceKind>& deviceNames() {
  static const common::NamedValues<DeviceKind> names("--device",
                                                     {{DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}});
  return names;
}

const common::NamedValues<OptimizerKind>& optimizerNames() {
  static const common::NamedValues<OptimizerKind> names({"optimizer", "optimizers"}, "--optimizer",
                                                        {{OptimizerKind::kSgd, "sgd"},
                                                         {OptimizerKind::kAdam, "adam"},
                                                         {OptimizerKind::kRmsprop, "rmsprop"}});
  return names;
}

const common::NamedValues<Amp>& ampNames() {
  static const common::NamedValues<Amp> names({"mixed-precision mode", "mixed-precision modes"}, "--amp",
                                              {{Amp::kOff, "off"}, {Amp::kBf16, "bf16"}, {Amp::kFp16, "fp16"}});
  return names;
}

const common::NamedValues<Sync>& syncNames() {
  static const common::NamedValues<Sync> names({"synchronization", "synchronizations"}, "--sync",
                                               {{Sync::kSsgd, "ssgd"}, {Sync::kPairavg, "pairavg"}});
  return names;
}

const common::NamedValues<ParallelMode>& modeNames() {
  static const common::NamedValues<ParallelMode> names("--mode",
                                                       {{ParallelMode::kDdp, "ddp"}, {ParallelMode::kDp, "dp"}});
  return names;
}

const common::NamedValues<PhaseTiming>& phaseTimingNames() {
  static const common::NamedValues<PhaseTiming> names(
      "--phase-timing", {{PhaseTiming::kEvents, "events"}, {PhaseTiming::kSync, "sync"}, {PhaseTiming::kNone, "none"}});
  return names;
}

const common::NamedValues<bool>& cudnnBenchmarkNames() {
  static const common::NamedValues<bool> names("--cudnn-benchmark", {{true, "on"}, {false, "off"}});
  return names;
}

}  // namespace dtbench::run
