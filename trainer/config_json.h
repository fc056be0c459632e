#pragma once
// config.json (docs/run-directory.md): the run's configuration by its flags' names, and what the
// run found out when it started (environment, model size, data sizes, hosts, gradient buckets).
// Text appears here again for every enum of RunConfig: the names the command line parsed.

#include <string>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include <torch/nn/module.h>
#include "trainer/config.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/world.h"

namespace dtbench::trainer {

// Every field of `config` under its flag's name (--batch-size -> "batch_size").
nlohmann::json toJson(const RunConfig& config);

// The whole of config.json as rank 0 writes it: toJson(config) plus "rank", "environment" (with
// the heap policy `allocator`), the model's parameter count, the data's sizes and, with several
// ranks, the hosts, the pipeline segment and the gradient buckets. `world` and `sync` may be null.
nlohmann::json describeRun(const RunConfig& config, const std::string& allocator, const torch::nn::Module& model,
                           const data::DatasetSplits& data, const World* world, const GradientSync* sync);

}  // namespace dtbench::trainer
