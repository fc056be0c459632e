#pragma once
// StepDescription: a training step written down as data, so that `dtbench predict` can model a step
// that no run directory holds: a model outside the zoo, another image size, a GPU this machine lacks
// (docs/predict.md, "The step description"). One JSON object:
//
//   {"format": "dtbench-step-description/1", "description": "where every figure comes from",
//    "model": "resnet50", "dataset": "imagenet 224x224", "batch_size": 32, "train_samples": 1281167,
//    "drop_last": false,
//    "compute_s": {"h2d": 0, "forward": 0.04, "backward": 0.08, "optimizer": 0.01, "total": 0.135},
//    "settings": {"backend": "nccl", "topology": "native", "sync": "ssgd", "overlap": true, "bucket_mb": 25},
//    "buffer_elements": 53120,
//    "parameters": [{"name": "fc.weight", "elements": 2048000, "dtype": "float32", "ready_fraction": 0.02}, ...]}
//
// `parameters` are in backward order (the first one's gradient is ready first), each ready at
// `ready_fraction` × backward (0 to 1) or at `ready_s` seconds from backward's start. `compute_s.total`
// (optional, default the sum of the phases) is the step's compute; it may exceed the sum (what runs
// between the phases) but not fall short of h2d + forward + backward. `buffer_elements` (optional)
// are the floating-point buffers broadcast every step; absent, none is modelled. `settings` are the
// configuration the what-if flags change; absent keys take train's defaults (nccl, native, ssgd,
// overlap, 25 MiB). Any other key is refused, as are a key written twice and text after the value.
//
// describeStep writes the description of any step predict reads (a run directory's included), so a
// run's step can be edited (another batch, a faster GPU's phases) and predicted again.

#include <string>

#include <nlohmann/json.hpp>

#include "experiments/predict/measured_step.h"

namespace dtbench::predict {

inline constexpr const char* kStepDescriptionFormat = "dtbench-step-description/1";
// The largest figures a description takes: beyond them a value is a typo, and in the model's
// arithmetic it would overflow. `--describe-model` checks its flags against the same.
inline constexpr double kMostPhaseSeconds = 1e15;  // each of compute_s, and its total
inline constexpr int kMostBatchSize = 1 << 24;
inline constexpr int64_t kMostSamples = int64_t{1} << 40;

// Throws common::UsageError naming the file and the field.
MeasuredStep stepFromDescription(const nlohmann::json& json, const std::string& source);
MeasuredStep loadStepDescription(const std::string& path);

// A run directory (loadMeasuredStep) or a step description file.
MeasuredStep loadStep(const std::string& path);

// The description of `step`, parameters in backward order with ready_s (a median ready time past
// backward's end written as that end, which is where the model places it); `description` says where
// the figures come from.
nlohmann::json describeStep(const MeasuredStep& step, const std::string& description);

// Reads `description` back as predict reads a description file, so that none is written that predict
// would refuse: throws common::UsageError naming `writer` ("--describe-model resnet18") and the field.
void checkDescriptionReads(const nlohmann::json& description, const std::string& writer);

}  // namespace dtbench::predict
