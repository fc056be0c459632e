#include "trainer/datasets.h"

#include <iostream>

#include "data/cifar10.h"
#include "data/download.h"
#include "data/fashion_mnist.h"
#include "data/synthetic.h"

namespace dtbench::trainer {

data::DatasetSplits loadDatasets(const RunConfig& config) {
  if (config.dataset == "cifar10") {
    if (config.download) {
      data::DownloadOptions options;
      options.url = config.downloadUrl;
      options.md5 = config.downloadMd5;
      options.log = config.quiet ? nullptr : &std::cerr;
      data::ensureCifar10(config.dataDir, options);
    }
    return data::loadCifar10(config.dataDir);
  }
  if (config.dataset == "fashion-mnist") return data::loadFashionMnist(config.dataDir);
  if (config.dataset == "synthetic") {
    data::SyntheticOptions options;
    options.trainSize = config.syntheticTrainSize;
    options.testSize = config.syntheticTestSize;
    return data::makeSynthetic(options);
  }
  throwUnknownName("dataset", "--dataset", config.dataset, datasetNames());
}

void moveToDevice(data::DatasetSplits& splits, const c10::Device& device) {
  for (data::Dataset* d : {&splits.train, &splits.test}) {
    if (d->size() == 0) continue;
    d->images = d->images.to(device);
    d->labels = d->labels.to(device);
  }
}

}  // namespace dtbench::trainer
