#include "trainer/datasets.h"

#include <initializer_list>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/machine_memory.h"
#include "common/usage_error.h"
#include "data/cifar10.h"
#include "data/download.h"
#include "data/fashion_mnist.h"
#include "data/synthetic.h"

namespace dtbench::trainer {

namespace {

// The synthetic images are made in memory, one byte per pixel and channel and a label each: a size
// beyond the machine's memory is refused by name before anything is allocated.
void checkSyntheticFits(const data::SyntheticOptions& o) {
  const double perImage = static_cast<double>(o.channels * o.height * o.width) + sizeof(int64_t);
  const double bytes = (static_cast<double>(o.trainSize) + static_cast<double>(o.testSize)) * perImage;
  const std::optional<double> memory = common::physicalMemoryBytes();
  if (!memory || bytes <= *memory) return;
  throw common::UsageError("--synthetic-train-size " + std::to_string(o.trainSize) + " and --synthetic-test-size " +
                           std::to_string(o.testSize) + ": the synthetic images take " + common::gibText(bytes) +
                           " in memory (" + std::to_string(static_cast<int64_t>(perImage)) + " bytes each), more "
                           "than this machine's " + common::gibText(*memory) + "; ask for fewer images");
}

}  // namespace

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
      checkSyntheticFits(options);
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
