// PrefetchLoader: the Loader's batches, bit for bit, for any worker count; errors reach next().

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include "catch_torch.h"
#include "data/dataset.h"

#include "data/loader.h"
#include "data/prefetch_loader.h"
#include "data/synthetic.h"

using dtbench::data::Batch;
using dtbench::data::Dataset;
using dtbench::data::Loader;
using dtbench::data::LoaderOptions;
using dtbench::data::PrefetchLoader;
using dtbench::data::PrefetchOptions;

namespace {

Dataset prefetchDataset(int64_t n) {
  dtbench::data::SyntheticOptions o;
  o.trainSize = n;
  o.testSize = 0;
  o.height = 12;
  o.width = 12;
  o.seed = 5;
  return dtbench::data::makeSynthetic(o).train;
}

LoaderOptions loaderOptions(bool train) {
  LoaderOptions o;
  o.batchSize = 16;
  o.train = train;
  o.seed = 123;
  return o;
}

PrefetchOptions prefetch(int64_t workers, int64_t depth = 0) {
  PrefetchOptions o;
  o.workers = workers;
  o.depth = depth;
  return o;
}

template <typename AnyLoader>
std::vector<Batch> wholePrefetchedEpoch(AnyLoader& loader, int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<Batch> batches;
  while (auto b = loader.next()) batches.push_back(std::move(*b));
  return batches;
}

void requireIdentical(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("batch " << i);
    CHECK(a[i].indices == b[i].indices);
    CHECK(at::equal(a[i].images, b[i].images));  // bit-identical floats
    CHECK(at::equal(a[i].labels, b[i].labels));
  }
}

}  // namespace

TEST_CASE("PrefetchLoader gives bit-identical batches for 0 1 2 and 4 workers", "[prefetch]") {
  const auto data = prefetchDataset(203);  // 13 batches of 16, the last one of 11
  for (bool train : {true, false}) {
    Loader reference(data, loaderOptions(train));
    const auto expected1 = wholePrefetchedEpoch(reference, 1);
    const auto expected2 = wholePrefetchedEpoch(reference, 2);
    REQUIRE(expected1.size() == 13);
    for (int64_t workers : {0, 1, 2, 4}) {
      INFO("workers " << workers << " train " << train);
      PrefetchLoader loader(data, loaderOptions(train), prefetch(workers));
      CHECK(loader.batchesPerEpoch() == 13);
      CHECK(loader.workers() == workers);
      requireIdentical(wholePrefetchedEpoch(loader, 1), expected1);
      CHECK_FALSE(loader.next().has_value());  // exhausted until the next startEpoch
      requireIdentical(wholePrefetchedEpoch(loader, 2), expected2);
    }
  }
}

TEST_CASE("PrefetchLoader restarts cleanly from an abandoned epoch", "[prefetch]") {
  const auto data = prefetchDataset(203);
  Loader reference(data, loaderOptions(true));
  const auto expected = wholePrefetchedEpoch(reference, 7);
  PrefetchLoader loader(data, loaderOptions(true), prefetch(2, 3));
  loader.startEpoch(6);
  for (int i = 0; i < 4; ++i) REQUIRE(loader.next().has_value());  // cut, as --max-steps does
  requireIdentical(wholePrefetchedEpoch(loader, 7), expected);
  // Without startEpoch the loader serves epoch 0, like Loader.
  PrefetchLoader fresh(data, loaderOptions(true), prefetch(2));
  CHECK(fresh.next()->indices == reference.batch(0, 0).indices);
}

TEST_CASE("PrefetchLoader builds at most depth batches ahead", "[prefetch]") {
  std::atomic<int64_t> built{0};
  auto make = [&](int64_t, int64_t b) {
    ++built;
    Batch batch;
    batch.indices = {b};
    return batch;
  };
  PrefetchLoader loader(make, 100, prefetch(2, 3));
  loader.startEpoch(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(built.load() == 3);
  REQUIRE(loader.next()->indices == std::vector<int64_t>{0});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(built.load() == 4);
}

TEST_CASE("PrefetchLoader rethrows a worker's exception in next() in order", "[prefetch]") {
  for (int64_t workers : {0, 1, 3}) {
    INFO("workers " << workers);
    auto make = [](int64_t epoch, int64_t b) {
      if (epoch == 1 && b == 5) throw std::runtime_error("batch 5 of epoch 1 is broken: fix the data");
      Batch batch;
      batch.indices = {epoch, b};
      return batch;
    };
    PrefetchLoader loader(make, 8, prefetch(workers));
    loader.startEpoch(1);
    for (int64_t b = 0; b < 5; ++b) {
      auto batch = loader.next();
      REQUIRE(batch.has_value());
      CHECK(batch->indices == std::vector<int64_t>{1, b});
    }
    CHECK_THROWS_AS(loader.next(), std::runtime_error);
    CHECK_THROWS_WITH(loader.next(), "batch 5 of epoch 1 is broken: fix the data");  // until startEpoch
    loader.startEpoch(2);
    int64_t count = 0;
    while (auto batch = loader.next()) CHECK(batch->indices == std::vector<int64_t>{2, count++});
    CHECK(count == 8);
  }
}

TEST_CASE("PrefetchLoader shuts down while workers are busy", "[prefetch]") {
  std::atomic<int64_t> built{0};
  auto slow = [&](int64_t, int64_t b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ++built;
    Batch batch;
    batch.indices = {b};
    return batch;
  };
  {
    PrefetchLoader loader(slow, 1000, prefetch(4));
    loader.startEpoch(0);
    REQUIRE(loader.next().has_value());
  }  // the destructor joins the workers
  CHECK(built.load() <= 1 + 8 + 4);  // depth 8 ahead, plus batches in flight
  { PrefetchLoader idle(slow, 1000, prefetch(2)); }  // never started
}

TEST_CASE("PrefetchLoader validates its options", "[prefetch]") {
  const auto data = prefetchDataset(10);
  CHECK_THROWS_WITH(PrefetchLoader(data, loaderOptions(true), prefetch(-1)), Catch::Contains("--workers must be >= 0"));
  auto bad = loaderOptions(true);
  bad.batchSize = 0;
  CHECK_THROWS_WITH(PrefetchLoader(data, bad, prefetch(2)), Catch::Contains("--batch-size"));
  PrefetchLoader loader(data, loaderOptions(true), prefetch(1));
  CHECK_THROWS_AS(loader.startEpoch(-1), std::invalid_argument);
}

TEST_CASE("PrefetchLoader does not pin memory without a CUDA device", "[prefetch]") {
  const auto data = prefetchDataset(40);
  auto o = prefetch(2);
  o.pinMemory = true;
  PrefetchLoader loader(data, loaderOptions(true), o);
  Loader reference(data, loaderOptions(true));
  const auto batches = wholePrefetchedEpoch(loader, 0);
  requireIdentical(batches, wholePrefetchedEpoch(reference, 0));
  if (!at::hasCUDA()) CHECK_FALSE(batches.front().images.is_pinned());
}

// Note [One intra-op thread off the training thread] (compat/torch_compat.h): a worker that took
// the training thread's count would run its ops on an OpenMP team of its own and oversubscribe the
// cores the step runs on. The cause is checked here, not the speed: each worker sees one thread,
// and the training thread keeps its own count.
TEST_CASE("prefetch workers run their ops on one intra-op thread and the training thread keeps its count",
          "[prefetch]") {
  const int previous = at::get_num_threads();
  at::set_num_threads(2);
  std::mutex mutex;
  std::vector<int> seen;
  {
    PrefetchOptions options;
    options.workers = 2;
    PrefetchLoader loader(
        [&](int64_t, int64_t b) {
          Batch batch;
          batch.images = at::full({2, 3, 8, 8}, static_cast<float>(b));
          batch.labels = at::zeros({2}, at::kLong);
          std::lock_guard<std::mutex> lock(mutex);
          seen.push_back(at::get_num_threads());
          return batch;
        },
        6, options);
    while (loader.next()) {
    }
  }
  const int training = at::get_num_threads();
  at::set_num_threads(previous);
  REQUIRE(seen.size() == 6);
  for (int threads : seen) CHECK(threads == 1);
  CHECK(training == 2);
}
