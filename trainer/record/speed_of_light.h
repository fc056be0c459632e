#pragma once
// describeSpeedOfLight: config.json's "speed_of_light" (run/speed_of_light.h) for the run about to
// train, before its first step (outside the timed steps): the model's FLOPs per image counted from its
// layers on one image of the run's size (models/flop_count.h, on a CPU copy built as the trainer builds
// it), the precision its convolutions and linear layers run in (autocast's bf16 or fp16; else fp32, or
// TF32 where cuDNN's (convolutions) or cuBLAS's (matrix products) TF32 flag is on: dtbench sets
// neither, so LibTorch's defaults, cuDNN on and cuBLAS off), and the peak: the identified GPU's
// datasheet figures (run/device_peaks.h; "unknown" and no figure otherwise), or on the CPU the GEMM
// probe (trainer/record/gemm_probe.h). nullopt for images that are not square (no count).

#include <optional>

#include <c10/core/Device.h>

#include "data/dataset.h"
#include "models/flop_count.h"
#include "run/run_facts.h"
#include "trainer/config.h"

namespace dtbench::trainer {

// config.json's FLOPs per image from a count of the model's layers (FLOPs = 2 x multiply-adds).
run::ModelFlops modelFlops(const models::FlopCount& count);

std::optional<run::SpeedOfLight> describeSpeedOfLight(const RunConfig& config, const data::Dataset& train,
                                                      c10::Device device, const run::DeviceFacts& rank0);

}  // namespace dtbench::trainer
