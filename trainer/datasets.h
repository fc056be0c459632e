#pragma once
// loadDatasets: the train and test splits the configuration names (--dataset, --data-dir,
// --download*, --synthetic-train-size, --synthetic-test-size). Synthetic data are the same
// whatever --seed, so runs with different seeds train on the same images.

#include <functional>

#include <c10/core/Device.h>

#include "data/dataset.h"
#include "trainer/config.h"

namespace dtbench::trainer {

// With --download (cifar10), first makes --data-dir hold CIFAR-10 (data/download.h), reporting
// each stage on stderr unless --quiet, and stopping with data::DownloadInterrupted as soon as
// `cancelled` (the run's SIGINT/SIGTERM flag) returns true. Throws data::DataError for missing or
// bad data.
data::DatasetSplits loadDatasets(const RunConfig& config, const std::function<bool()>& cancelled = {});

// --data-on-device: moves both splits' uint8 images and labels to `device`, where the loaders
// then gather and augment batches.
void moveToDevice(data::DatasetSplits& splits, const c10::Device& device);

}  // namespace dtbench::trainer
