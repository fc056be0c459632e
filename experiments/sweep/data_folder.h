#pragma once
// The data a sweep's points read, checked before any point runs or is submitted (docs/sweep.md,
// "Before anything runs"): without it every point would fail, under Slurm only after its job had
// waited in the queue for its GPUs.
//
// Contract of checkDataFolder(data), `data` being a point's resolved settings (run::resolveDefaults:
// an empty --data-dir is the dataset's default folder):
//  - cifar10: `data.dir` holds the six batches dtbench train reads, data_batch_1.bin ...
//    data_batch_5.bin and test_batch.bin, in its cifar-10-batches-bin/ or in itself, as
//    data::loadCifar10 (data/cifar10.cpp) looks for them; fashion-mnist: the four IDX files, each
//    plain or .gz, as data::loadFashionMnist (data/fashion_mnist.cpp) does. Only by name: the sweep
//    may not use data/, which needs LibTorch (docs/design.md, "Layers"), and the files' contents are
//    the trainer's to check (a damaged file is a point's data error, not retried).
//  - cifar10 with --download: the files, else a folder the download can write (data::ensureCifar10,
//    data/download.h, creates `data.dir`): `data.dir`, or the nearest folder above it that exists.
//  - synthetic: nothing to check.
// Throws common::UsageError naming the folder, what is missing in it and how to fetch it.

#include "run/run_config.h"

namespace dtbench::sweep {

void checkDataFolder(const run::DataConfig& data);

}  // namespace dtbench::sweep
