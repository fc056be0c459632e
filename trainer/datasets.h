#pragma once
// loadDatasets: the train and test splits the configuration names (--dataset, --data-dir,
// --synthetic-train-size, --synthetic-test-size). Synthetic data are the same whatever --seed,
// so runs with different seeds train on the same images.

#include "data/dataset.h"
#include "trainer/config.h"

namespace dtbench::trainer {

data::DatasetSplits loadDatasets(const RunConfig& config);

}  // namespace dtbench::trainer
