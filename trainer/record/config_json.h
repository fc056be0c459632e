#pragma once
// config.json (docs/run-directory.md) as rank 0 writes it: the run's settings (run/config_schema.h)
// and what the run found out when it started (run/run_facts.h: environment, model size, data sizes,
// hosts, gradient buckets), gathered here from the trainer's parts.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include <torch/nn/module.h>
#include "run/run_facts.h"
#include "trainer/config.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// The whole of config.json: every recorded setting (with the World's rank and size when there is a
// world), "rank", "environment" (with the heap policy `allocator`), the model's parameter count, the
// data's sizes and, with a world, the hosts, the pipeline segment and the gradient buckets. `world`
// and `sync` may be null.
// `devices`: every rank's (trainer/record/device_facts.h, describeDevices); `speedOfLight`: the FLOPs
// and peak (trainer/record/speed_of_light.h), written when present.
nlohmann::json describeRun(const RunConfig& config, const std::string& allocator, const torch::nn::Module& model,
                           const data::DatasetSplits& data, const World* world, const GradientSync* sync,
                           std::vector<run::DeviceFacts> devices,
                           std::optional<run::SpeedOfLight> speedOfLight = std::nullopt);

}  // namespace dtbench::trainer
