#pragma once
// Configuration: the grouping key of dtbench report (docs/report.md, "Which runs"). Runs that
// differ only in their repeats share a key; runs of one rank have no setup and are the baseline
// T(1) of every setup with the same model, dataset, device and mode. The number of nodes is part of
// the key beside the world size (4 ranks on one node and 2 × 2 on two nodes are not repeats) but
// not of the series, which spans world sizes and node counts alike.

#include <map>
#include <set>
#include <string>
#include <vector>
#include <tuple>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

// `settings` without the multi-rank ones (multiRankSettingKeys): what a single-rank baseline's settings hold.
std::map<std::string, std::string> singleRankSettings(std::map<std::string, std::string> settings);

struct Configuration {
  std::string model, dataset;
  std::string device;  // "cpu", or "cuda" with the GPU's model ("cuda NVIDIA A100-SXM4-80GB") when recorded
  std::string mode;  // "ddp" or "dp", then ", amp bf16" / ", amp fp16" and ", channels-last" when used
  // "backend/topology sync[, no overlap][, bucket B MB][, local BN][, delay D ms][, rate R Gbps][, loss L%]
  // [, links R Gbps]"; "" for one rank
  std::string setup;
  int batch = 0;
  int world = 1;
  int nodes = 0;          // Placement::nodes: distinct hosts, 1 for one rank, 0 unknown
  std::string placement;  // Placement::text(): "2 nodes × 2 ranks", "" on one node
  // Every other row of the run's schema (run/config_schema.h) that changes what a step takes or computes
  // (threads, optimizer, lr, phase_timing, cuda_graph, ...: configurationSettingKeys()), key -> value as
  // config.json holds it (--compress as the chosen epoch's steps sent it: selectRuns). Part of the key,
  // series and baseline (a single rank's lacks the multi-rank ones); selectRuns adds the ones that differ
  // among a report's runs to `mode` ("ddp, threads=2") or `setup`, where the tables show them.
  std::map<std::string, std::string> settings;
  // A segment of a resized run (runs/run_segments.h): "segment 2/3 of RUN, global batch 12", also appended to
  // `setup`; "" for a run. Part of the key: a segment is never a repeat of another run, nor a baseline.
  std::string segment;

  // Everything but batch and world: what a Table 1 series shares.
  auto series() const { return std::tie(model, dataset, device, mode, settings, setup); }
  // What the single-rank baseline shares: its settings hold none that only several ranks act on.
  auto baseline() const { return std::make_tuple(model, dataset, device, mode, singleRankSettings(settings)); }
  bool operator<(const Configuration& o) const {
    return std::tie(model, dataset, device, mode, setup, batch, world, nodes, settings, segment) <
           std::tie(o.model, o.dataset, o.device, o.mode, o.setup, o.batch, o.world, o.nodes, o.settings, o.segment);
  }
  bool operator==(const Configuration& o) const { return !(*this < o) && !(o < *this); }
};

Configuration configurationOf(const RunData& run);

// The schema rows that Configuration::settings holds: every recorded row except those the other
// fields already say (model, batch, backend, topology, ...) and those that change neither what a
// step takes nor what it computes (where data and results live, how long the run goes, the seed,
// rendezvous and logging).
const std::vector<std::string>& configurationSettingKeys();

// The settings only runs of several ranks act on (--compress and its options, --check-every,
// --inject-rto-ms): no part of a single rank's configuration.
const std::set<std::string>& multiRankSettingKeys();

// Appends to every configuration's mode the settings whose values differ among `configurations`
// (", threads=2"), and to its setup the multi-rank ones (", compress=powersgd"), so the tables tell apart
// the rows the key tells apart.
void nameDifferingSettings(std::vector<Configuration*> configurations);

// "resnet18 synthetic B=32 N=2 gloo/ring ssgd": the configuration in one line (job table), with the
// placement when there is one to tell ("... N=4 gloo/ring ssgd, links 1 Gbps, 2 nodes × 2 ranks").
std::string describe(const Configuration& configuration);

// ", links 1 Gbps" for a run whose config.json has link_rate_bps (the emulated cluster's shaped
// links): the distinct rates of its hosts in Gbit/s, ascending, joined by '/', "unshaped" for a host
// whose rate is null ("links 0.5/1 Gbps", "links 1 Gbps/unshaped"); "" without link rates.
std::string linkRatesText(const RunData& run);

// The distinct GPU models of the run's devices (config.json's "devices") in rank order, joined by
// " + "; "" without a GPU or a record of it. A GPU the peak table identifies (run/device_peaks.h) is
// named by its datasheet ("NVIDIA A100 SXM4 80GB"), so that one part under two driver spellings is
// one model.
std::string gpuModels(const run::RunFacts& facts);

}  // namespace dtbench::report
