#include "trainer/datasets.h"

#include "data/cifar10.h"
#include "data/synthetic.h"

namespace dtbench::trainer {

data::DatasetSplits loadDatasets(const RunConfig& config) {
  if (config.dataset == "cifar10") return data::loadCifar10(config.dataDir);
  if (config.dataset == "synthetic") {
    data::SyntheticOptions options;
    options.trainSize = config.syntheticTrainSize;
    options.testSize = config.syntheticTestSize;
    return data::makeSynthetic(options);
  }
  throwUnknownName("dataset", "--dataset", config.dataset, datasetNames());
}

}  // namespace dtbench::trainer
