// bench_loader: images/s of dtbench's training loader alone (gather + random crop + flip +
// normalize, PrefetchLoader with N workers) on CIFAR-shaped synthetic data, no model. Built by
// CMake, run by scripts/bench_loader.py (not by CTest); results go to docs/benchmarks.md.
//
//   bench_loader [--workers N] [--repeats R] [--batches B] [--batch-size S] [--threads T]
//                [--train-size N]
//   bench_loader --dump FILE [--train-size N]   writes the dataset as CIFAR-10 binary records,
//                                               for the PyTorch side of the comparison
//
// Each repeat times B batches of a fresh epoch, from startEpoch to the B-th batch received, after
// one untimed warm-up repeat; prints CSV rows workers,repeat,images,seconds,images_per_s. The
// benchmark checks itself: every batch has the expected shape, and the first batch of every
// repeat is bit-identical to Loader::batch(epoch, 0) computed without workers.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "data/dataset.h"
#include "data/loader.h"
#include "data/prefetch_loader.h"
#include "data/synthetic.h"
#include "trainer/memory_policy.h"

namespace {

struct BenchOptions {
  int64_t workers = 0;
  int64_t repeats = 5;
  int64_t batches = 100;
  int64_t batchSize = 128;
  int64_t threads = 1;
  int64_t trainSize = 50000;
  std::string dump;
};

BenchOptions parse(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--workers") o.workers = std::stoll(value);
    else if (flag == "--repeats") o.repeats = std::stoll(value);
    else if (flag == "--batches") o.batches = std::stoll(value);
    else if (flag == "--batch-size") o.batchSize = std::stoll(value);
    else if (flag == "--threads") o.threads = std::stoll(value);
    else if (flag == "--train-size") o.trainSize = std::stoll(value);
    else if (flag == "--dump") o.dump = value;
    else throw std::invalid_argument("unknown flag " + flag + "; see the comment atop bench_loader.cpp");
  }
  return o;
}

void dump(const dtbench::data::Dataset& d, const std::string& file) {
  std::ofstream out(file, std::ios::binary);
  const auto* images = d.images.data_ptr<uint8_t>();
  const auto* labels = d.labels.data_ptr<int64_t>();
  const int64_t imageBytes = d.images[0].numel();
  for (int64_t i = 0; i < d.size(); ++i) {
    out.put(static_cast<char>(labels[i]));
    out.write(reinterpret_cast<const char*>(images + i * imageBytes), imageBytes);
  }
  if (!out) throw std::runtime_error("cannot write " + file);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const BenchOptions o = parse(argc, argv);
    // The trainer's heap policy (Note [Keeping freed memory]), so the loader runs as it does in training.
    const std::string memoryPolicy = dtbench::trainer::applyMemoryPolicy();
    at::set_num_threads(static_cast<int>(o.threads));
    dtbench::data::SyntheticOptions synthetic;
    synthetic.trainSize = o.trainSize;
    synthetic.testSize = 0;
    const auto data = dtbench::data::makeSynthetic(synthetic).train;
    if (!o.dump.empty()) {
      dump(data, o.dump);
      return 0;
    }
    dtbench::data::LoaderOptions loaderOptions;
    loaderOptions.batchSize = o.batchSize;
    loaderOptions.seed = 1;
    dtbench::data::PrefetchOptions prefetch;
    prefetch.workers = o.workers;
    const dtbench::data::Loader reference(data, loaderOptions);
    dtbench::data::PrefetchLoader loader(data, loaderOptions, prefetch);
    if (o.batches > loader.batchesPerEpoch()) throw std::invalid_argument("--batches exceeds an epoch");
    std::fprintf(stderr, "bench_loader: allocator %s\n", memoryPolicy.c_str());
    std::printf("workers,repeat,images,seconds,images_per_s\n");
    for (int64_t r = -1; r < o.repeats; ++r) {  // r = -1: warm-up
      const int64_t epoch = r + 2;
      const auto start = std::chrono::steady_clock::now();
      loader.startEpoch(epoch);
      int64_t images = 0;
      at::Tensor first;
      for (int64_t b = 0; b < o.batches; ++b) {
        auto batch = loader.next();
        if (!batch || batch->images.size(1) != 3 || batch->images.size(2) != 32 ||
            batch->images.scalar_type() != at::kFloat) {
          throw std::runtime_error("bad batch " + std::to_string(b));
        }
        images += batch->images.size(0);
        if (b == 0) first = batch->images;
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!at::equal(first, reference.batch(epoch, 0).images)) {
        throw std::runtime_error("the first batch differs from Loader::batch: the loader is broken");
      }
      if (r >= 0) {
        std::printf("%lld,%lld,%lld,%.6f,%.1f\n", static_cast<long long>(o.workers), static_cast<long long>(r),
                    static_cast<long long>(images), seconds, static_cast<double>(images) / seconds);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_loader: %s\n", e.what());
    return 1;
  }
}
