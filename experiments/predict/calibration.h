#pragma once
// Calibration: latency and bandwidth of each link class fitted to measured all-reduces, the
// `dtbench allreduce --csv` results (docs/predict.md, "Calibration").
//
//  - Rows over one node (nodes = 1, world > 1) of point-to-point topologies fit the intra-node class;
//    rows over several nodes fit the inter-node class, with the intra-node class as fitted (or, when
//    no row is over one node, as the inter-node class: with one rank per node it is never used).
//  - Each fit minimises Σ ln(predicted / measured)² over its rows from 1 MiB (over all its rows when
//    those hold fewer than two sizes): below that, latency, protocol switches and the emulated
//    links' token-bucket bursts (a burst of ~1 ms at the link rate passes at once) bend the times
//    away from any latency + size / bandwidth line, and a fit to them misplaces the bandwidth that
//    large buckets see. Relative errors: every size fitted weighs alike; predicted by the network model (network_model.h) of the row's topology,
//    world, nodes, size, element type and pipeline segment; Nelder–Mead over (ln α, ln β).
//  - `native` rows give each backend's native efficiency: exp(mean ln(ring model / measured)) over
//    its rows from 1 MiB (all its rows when none is that large), so a native all-reduce is predicted
//    as the ring model's time / efficiency.
// The nodes of a row are its `nodes` column, else the number of hosts in its `link_rate_bps`, else 1.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/predict/hardware.h"

namespace dtbench::predict {

// Rows from this size on are "large": the calibration weighs them for the native efficiency, and the
// error summaries report them apart (the model's own goal is stated from 1 MiB).
inline constexpr int64_t kLargeBytes = int64_t{1} << 20;

struct AllreduceMeasurement {
  std::string source;  // file:line
  std::string backend, topology, type;
  int world = 1, nodes = 1;
  int64_t bytes = 0, elementBytes = 4, segmentBytes = 0;
  double seconds = 0;
  std::optional<double> linkRateBps;  // the CSV's link_rate_bps (the emulated cluster's slowest link)
};

// Throws common::UsageError naming `flag` (the option that named the file), the file, line and
// column of a bad field.
std::vector<AllreduceMeasurement> readAllreduceCsv(const std::string& path, const std::string& flag);

// The model's time for one measured configuration on `hardware` (ranks per node = world / nodes).
double modelledSeconds(const AllreduceMeasurement& row, const Hardware& hardware);

// What a row calibrates: "native" (a backend's efficiency), "intra" (over one node) or "inter"
// (over several); "" for a row the model has nothing to say about (one rank, or under one element).
std::string linkClassOf(const AllreduceMeasurement& row);

struct CalibrationRow {
  AllreduceMeasurement measured;
  std::string linkClass;  // "intra", "inter" or "native"
  double predictedS = 0;
};

struct Calibration {
  Hardware hardware;
  std::vector<CalibrationRow> rows;
  double intraRmsLog = 0, interRmsLog = 0;  // the fits' residuals
};

// Throws common::UsageError when no row can be fitted (e.g. every row is on one rank).
Calibration calibrate(const std::vector<AllreduceMeasurement>& rows);

}  // namespace dtbench::predict
