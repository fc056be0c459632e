#pragma once
// MeasuredStep: what `dtbench predict` takes from one measured run directory (docs/predict.md, "What
// is taken from the run"): the mean compute of one step and its phases, when each parameter's
// gradient became ready during backward (step_profile.json), the sizes and element types of the
// gradients, and the settings the step ran with (config.json).
//
// The rows are the steps of the last epoch rank 0 recorded, without the run's first step (warm-up) when
// the epoch has more than one, and of a compressed run only the steps that compressed (compress_s > 0:
// PowerSGD's first --compress-start steps do not); of each step, the row of the rank that ended backward
// last (the least comm_exposed_s; rank 0's on one rank). compute = step_s − data_s −
// comm_exposed_s, as the report defines it (docs/report.md, Table 2); a run of several ranks therefore
// brings its own communication's interference with compute (and a run of one rank none). The same steps'
// rows of every rank give the spread of the per-rank compute (ComputeSpread).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/bucket_layout.h"
#include "experiments/predict/compute_device.h"
#include "experiments/predict/compute_spread.h"
#include "run/run_config.h"
#include "run/speed_of_light.h"

namespace dtbench::predict {

struct MeasuredParameter {
  std::string name;
  int64_t elements = 0;
  int64_t elementBytes = 4;
  double readyS = 0;  // from the start of backward to its gradient's accumulation (median over steps)
  std::string dtype = "float32";
  std::vector<int64_t> shape;  // empty where not recorded (older profiles, buckets standing for parameters)
};

struct MeasuredStep {
  std::string path;         // the run directory, or the step description file
  bool described = false;   // from a step description (step_description.h), not measured
  std::string description;  // a description's own account of its figures
  std::string datasetLabel; // the run's dataset, or the description's free text
  run::RunConfig settings;  // config.json's, through the run's schema (run/config_schema.h)
  int worldSize = 1;
  int batchSize = 0;
  int64_t trainSamples = 0;
  std::optional<int64_t> segmentBytes;  // config.json's, for the run's own topology
  // The rule the buckets were laid out by: a run's is always c10d's (the trainer's); a step
  // description may say Horovod's Tensor Fusion (settings.bucket_layout, docs/predict.md).
  comm::BucketLayout bucketLayout = comm::BucketLayout::kDdp;
  int epoch = 0;
  int64_t rows = 0;  // steps averaged
  // Several ranks: each step's row is the critical rank's, the one that ended backward last (the least
  // comm_exposed_s); rank 0's on one rank. How many of the rows were another rank's, and rank 0's mean
  // wait for that rank (its comm_exposed_s less the critical rank's), which rank 0's rows alone would
  // have counted as communication.
  int64_t criticalRowsElsewhere = 0;
  double rank0WaitS = 0;
  // Means over the rows, seconds.
  double h2dS = 0, forwardS = 0, backwardS = 0, optimizerS = 0, computeS = 0;
  double measuredStepS = 0, measuredExposedS = 0, measuredCommTotalS = 0;  // step_s − data_s, and the run's own comm
  // The critical rows' compute, one per step kept (their mean is computeS): how well the mean is known
  // (prediction_band.h). Empty for a description.
  std::vector<double> computeSamplesS;
  std::vector<MeasuredParameter> parameters;  // model order
  bool readyMeasured = false;  // false: step_profile.json missing, ready times spread by size (see .cpp)
  int64_t bufferElements = 0;  // floating-point buffers broadcast every step (0 when unknown)
  bool bufferElementsKnown = false;
  ComputeDevice device;  // what the compute ran on (compute_device.h); unknown where nothing says
  // The model's training FLOPs per image and the precisions they ran in (config.json's
  // "speed_of_light", a description's "flops_per_image" and "precision"); absent where not recorded.
  std::optional<run::ModelFlops> flops;
  std::optional<run::Precision> convolutionPrecision, linearPrecision;
  std::optional<run::GemmProbe> gemmProbe;  // a CPU run's measured matrix-product rate
  // Encoding and decoding of one compressed step (batches.csv's compress_s: the mean over the rows that
  // compressed; a description's "compress_s"), for the settings' own --compress and --compress-rank;
  // absent without compression or where nothing measured it.
  std::optional<double> compressS;
  // Every rank's compute (step_s − data_s − comm_exposed_s) in every step kept, not only the critical
  // rank's: how the ranks' compute spreads, which a step of N ranks pays the slowest of (compute_spread.h).
  // A description's "compute_spread"; unknown (no samples) where it has none.
  ComputeSpread spread;

  int64_t gradientElements() const;
};

// Throws common::UsageError naming the directory and what is missing or damaged.
MeasuredStep loadMeasuredStep(const std::string& runDirectory);

// Steps per rank and epoch at world N (data/sampler.cpp and data/loader.cpp: the sampler pads the
// dataset to a multiple of N, or cuts it with --drop-last; then batches of B, the last one partial
// unless --drop-last).
int64_t stepsPerEpoch(const MeasuredStep& run, int world);

// Images one rank holds an epoch at world N: the dataset padded to a multiple of N (repeating its
// first images), or cut to one with --drop-last, and dealt out alike (data/sampler.cpp).
int64_t samplesPerRank(const MeasuredStep& run, int world);

// Where the global batch (N × the batch per rank) exceeds the epoch's images, what the epoch is at
// world N, to be said beside its prediction; nullopt where the batch fits. E.g. 50,000 images, batch
// 128, N = 512: "N = 512: the global batch (512 × 128 = 65536 images) exceeds the epoch's 50000: 1 step
// an epoch, of 98 images a rank (the dataset padded to 50176, 176 of them repeated); predicted with
// the compute of a full batch of 128, which overstates this step's; images_per_s counts the 98".
// (With --drop-last such a world has no step at all, which predictStep refuses.)
std::optional<std::string> globalBatchNote(const MeasuredStep& run, int world);

}  // namespace dtbench::predict
