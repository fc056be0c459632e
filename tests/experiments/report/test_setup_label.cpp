// The setup label (experiments/report/runs/setup_label.h) that the report's rows and predict's rows and
// figures name: what is default and left out, tested once for both.
#include <catch2/catch.hpp>

#include <string>

#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/setup_label.h"
#include "run/run_config.h"
#include "run/settings.h"

using dtbench::comm::Backend;
using dtbench::comm::Topology;
using dtbench::report::setupLabel;
using dtbench::run::Sync;
using dtbench::run::kDefaultBucketMb;

TEST_CASE("the setup label names the backend, topology and sync, then what is not the default",
          "[report][setup]") {
  const Topology ring = Topology::parse("ring");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, true, kDefaultBucketMb, false) == "gloo/ring ssgd");
  CHECK(setupLabel(Backend::kMpi, Topology(), Sync::kSsgd, true, kDefaultBucketMb, false) == "mpi/native ssgd");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, false, kDefaultBucketMb, false) == "gloo/ring ssgd, no overlap");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, true, 5, false) == "gloo/ring ssgd, bucket 5 MB");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, true, 0.5, false) == "gloo/ring ssgd, bucket 0.5 MB");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, true, kDefaultBucketMb, true) == "gloo/ring ssgd, local BN");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, false, 5, true) ==
        "gloo/ring ssgd, no overlap, bucket 5 MB, local BN");
  // A cap that differs from the default by a rounding (a config.json number read back) is the default.
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kSsgd, true, kDefaultBucketMb + 1e-12, false) == "gloo/ring ssgd");
}

TEST_CASE("overlap and the bucket cap are left out of a sync that has neither", "[report][setup]") {
  const Topology ring = Topology::parse("ring");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kPairavg, false, 5, false) == "gloo/ring pairavg");
  CHECK(setupLabel(Backend::kGloo, ring, Sync::kPairavg, true, 0, true) == "gloo/ring pairavg, local BN");
}

TEST_CASE("a measured run's configuration carries the setup label", "[report][setup][configuration]") {
  dtbench::report::RunData run;
  dtbench::report::readConfig(run, {{"model", "resnet18"}, {"dataset", "synthetic"}, {"batch_size", 32},
                                    {"world_size", 2}, {"backend", "gloo"}, {"topology", "tree"}, {"sync", "ssgd"},
                                    {"overlap", false}, {"bucket_mb", 5}});
  CHECK(dtbench::report::configurationOf(run).setup ==
        setupLabel(Backend::kGloo, Topology::parse("tree"), Sync::kSsgd, false, 5, false));
  CHECK(dtbench::report::configurationOf(run).setup == "gloo/tree ssgd, no overlap, bucket 5 MB");
}
