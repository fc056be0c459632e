#pragma once
// ControlPlane: what the training framework adds between a gradient being ready and its all-reduce
// starting (docs/predict.md, "The collective library and the framework"). A hardware or system file
// names the framework in its optional `framework` row:
//
//   "framework": {"name": "horovod", "release": "0.16", "cycle_ms": 5, "fusion_mb": 64, "negotiation": "rank0"}
//   "framework": {"name": "ddp"}
//
// ddp (c10d's DistributedDataParallel, dtbench's own trainer) launches a bucket's all-reduce from the
// gradient hook that fills it: no control plane, nothing charged. Horovod's background thread runs a
// cycle every `cycle_ms` (HOROVOD_CYCLE_TIME: 5 ms before v0.21, 1 ms after): a cycle gathers the
// ranks' requests, and the all-reduces every rank has asked for are fused, up to `fusion_mb` (the
// fusion buffer, HOROVOD_FUSION_THRESHOLD: 64 MB before v0.21, 128 MB after), and launched. A bucket
// whose last gradient is ready at t is launched at the next cycle's start; the cycles' phase against
// the step is unknown, so the wait is taken as its expectation, half a cycle, for every launch:
//
//   launch_k = max(launch_{k−1}, ready_k + cycle / 2)
//
// and the fusion buffer is the bucket cap of Horovod's fusion layout (comm::assignBucketsByFusion) unless
// --bucket-layout or --bucket-mb say otherwise. Rank 0's negotiation of each uncached request (the
// `negotiation` field, "rank0") has no cited per-rank cost, so it is not charged: the prediction says so.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/predict/json_fields.h"

namespace dtbench::predict {

struct ControlPlane {
  std::string name = "ddp";  // "ddp" or "horovod"
  std::string release;       // as the file wrote it (horovod: required)
  double cycleS = 0;         // horovod: its cycle
  double fusionMb = 0;       // horovod: its fusion buffer, MiB
  std::string negotiation;   // horovod: "rank0"

  bool horovod() const { return name == "horovod"; }
  // What a launch waits for the framework, on average: half a cycle (0 for ddp).
  double launchWaitS() const { return horovod() ? cycleS / 2 : 0; }
  // One line for the prediction's notes: what is charged and what is not.
  std::string assumed() const;
};

// The file's `framework` row; refusals name the key (common::UsageError through `f`).
ControlPlane controlPlaneFromJson(const nlohmann::json& row, const JsonFields& f);
nlohmann::json toJson(const ControlPlane& plane);

}  // namespace dtbench::predict
