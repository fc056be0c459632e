#include "trainer/datasets.h"

#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>

#include "data/cifar10.h"
#include "data/download.h"
#include "data/fashion_mnist.h"
#include "data/synthetic.h"

namespace dtbench::trainer {

data::DatasetSplits loadDatasets(const RunConfig& config, const std::function<bool()>& cancelled) {
  const DataConfig& d = config.data;
  switch (d.dataset) {
    case DatasetKind::kCifar10:
      if (d.download) {
        data::DownloadOptions options;
        options.url = d.downloadUrl;
        options.md5 = d.downloadMd5;
        options.log = config.quiet ? nullptr : &std::cerr;
        options.cancelled = cancelled;
        data::ensureCifar10(d.dir, options);
      }
      return data::loadCifar10(d.dir);
    case DatasetKind::kFashionMnist: return data::loadFashionMnist(d.dir);
    case DatasetKind::kSynthetic: {
      data::SyntheticOptions options;
      options.trainSize = d.syntheticTrainSize;
      options.testSize = d.syntheticTestSize;
      return data::makeSynthetic(options);
    }
  }
  throw std::logic_error("unreachable DatasetKind");
}

void moveToDevice(data::DatasetSplits& splits, const c10::Device& device) {
  for (data::Dataset* d : {&splits.train, &splits.test}) {
    if (d->size() == 0) continue;
    d->images = d->images.to(device);
    d->labels = d->labels.to(device);
  }
}

}  // namespace dtbench::trainer
