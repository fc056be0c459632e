#pragma once
// The run's configuration as the trainer takes it: RunConfig, its defaults and its closed sets live
// in run/ (the run's vocabulary, without LibTorch: run/run_config.h, run/settings.h); the trainer
// adds the checks that need its libraries and this machine (the model's name, the cores, what this
// build can run).

#include "run/run_config.h"
#include "run/settings.h"

namespace dtbench::trainer {

using run::Amp;
using run::CommConfig;
using run::Compression;
using run::DataConfig;
using run::DatasetKind;
using run::DeviceKind;
using run::OptimizerConfig;
using run::OptimizerKind;
using run::ParallelMode;
using run::PrecisionConfig;
using run::RunConfig;
using run::Sync;
using run::SyncConfig;
using run::ampNames;
using run::compressionNames;
using run::datasetNames;
using run::deviceNames;
using run::modeNames;
using run::optimizerNames;
using run::syncNames;

using run::resolveDefaults;

// Throws common::UsageError naming the first flag whose value cannot work: each setting's own rule
// (run/config_schema.h), then what depends on several settings or on this machine and build (an
// unknown model, more threads than cores, a combination that cannot run, ...).
void validate(const RunConfig& config);

}  // namespace dtbench::trainer
