#include "experiments/predict/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "comm/backends/backend.h"
#include "comm/element_type.h"
#include "comm/topology/native_models.h"
#include "comm/topology/registry.h"
#include "comm/topology/ring.h"
#include "common/usage_error.h"
#include "common/csv_file.h"

namespace dtbench::predict {
namespace {


using Objective = std::function<double(const std::array<double, 2>&)>;

// Nelder–Mead in two dimensions (standard coefficients), from `start` with steps `step`.
std::array<double, 2> minimise(const Objective& f, std::array<double, 2> start, std::array<double, 2> step) {
  std::array<std::array<double, 2>, 3> x{start, start, start};
  x[1][0] += step[0];
  x[2][1] += step[1];
  std::array<double, 3> fx{f(x[0]), f(x[1]), f(x[2])};
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::array<int, 3> order{0, 1, 2};
    std::sort(order.begin(), order.end(), [&](int a, int b) { return fx[a] < fx[b]; });
    const int best = order[0], mid = order[1], worst = order[2];
    if (std::abs(fx[worst] - fx[best]) < 1e-12 * (1 + std::abs(fx[best])) &&
        std::hypot(x[worst][0] - x[best][0], x[worst][1] - x[best][1]) < 1e-7)
      break;
    const std::array<double, 2> centre{(x[best][0] + x[mid][0]) / 2, (x[best][1] + x[mid][1]) / 2};
    const auto along = [&](double t) {
      return std::array<double, 2>{centre[0] + t * (x[worst][0] - centre[0]), centre[1] + t * (x[worst][1] - centre[1])};
    };
    const std::array<double, 2> r = along(-1);
    const double fr = f(r);
    if (fr < fx[best]) {
      const std::array<double, 2> e = along(-2);
      const double fe = f(e);
      if (fe < fr) x[worst] = e, fx[worst] = fe;
      else x[worst] = r, fx[worst] = fr;
    } else if (fr < fx[mid]) {
      x[worst] = r, fx[worst] = fr;
    } else {
      const std::array<double, 2> c = along(fr < fx[worst] ? -0.5 : 0.5);
      const double fc = f(c);
      if (fc < std::min(fr, fx[worst])) {
        x[worst] = c, fx[worst] = fc;
      } else {
        for (int i : {mid, worst}) {
          x[i] = {(x[i][0] + x[best][0]) / 2, (x[i][1] + x[best][1]) / 2};
          fx[i] = f(x[i]);
        }
      }
    }
  }
  return x[std::min_element(fx.begin(), fx.end()) - fx.begin()];
}

int nodesOf(const common::CsvFile& csv, size_t row) {
  if (csv.hasColumn("nodes") && !csv.text(row, csv.column("nodes")).empty()) {
    const int64_t n = csv.integer(row, csv.column("nodes"));
    if (n < 1) csv.fail(row, csv.column("nodes"), "must be a count from 1");
    return static_cast<int>(n);
  }
  if (csv.hasColumn("link_rate_bps")) {
    const std::string& text = csv.text(row, csv.column("link_rate_bps"));
    if (!text.empty()) {
      try {
        const nlohmann::json rates = nlohmann::json::parse(text);
        if (rates.is_object() && !rates.empty()) return static_cast<int>(rates.size());
      } catch (const nlohmann::json::exception&) {
        csv.fail(row, csv.column("link_rate_bps"), "is not a JSON object of host rates");
      }
    }
  }
  return 1;
}

double sumSquaredLogs(const std::vector<AllreduceMeasurement>& rows, const Hardware& h) {
  double sum = 0;
  for (const AllreduceMeasurement& r : rows) {
    const double e = std::log(modelledSeconds(r, h) / r.seconds);
    sum += e * e;
  }
  return sum;
}

// The rows a class is fitted to: those from 1 MiB when they hold at least two sizes, else all of them.
std::vector<AllreduceMeasurement> fitRows(const std::vector<AllreduceMeasurement>& rows) {
  std::vector<AllreduceMeasurement> large;
  std::set<int64_t> sizes;
  for (const AllreduceMeasurement& r : rows)
    if (r.bytes >= kLargeBytes) {
      large.push_back(r);
      sizes.insert(r.bytes);
    }
  return sizes.size() >= 2 ? large : rows;
}

// Fits `which` of `base` (intra or inter) to `all` (fitRows of them); returns the fitted hardware.
Hardware fitClass(const std::vector<AllreduceMeasurement>& all, Hardware base, bool intra) {
  const std::vector<AllreduceMeasurement> rows = fitRows(all);
  // Start: bandwidth from the largest row as if it were a ring's 2(N-1)/N bytes, latency 50 us.
  const auto largest = *std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  const double beta0 = std::max(1e3, comm::ringBusFactor(largest.world) * largest.bytes / largest.seconds);
  const auto apply = [&](const std::array<double, 2>& x) {
    Hardware h = base;
    LinkClass& c = intra ? h.intra : h.inter;
    c.latencyS = std::exp(x[0]);
    c.bytesPerSecond = std::exp(x[1]);
    if (!intra && rows.front().world == rows.front().nodes) h.intra = h.inter;  // unused with one rank per node
    return h;
  };
  const std::array<double, 2> x =
      minimise([&](const std::array<double, 2>& v) { return sumSquaredLogs(rows, apply(v)); },
               {std::log(50e-6), std::log(beta0)}, {1.0, 0.5});
  return apply(x);
}

}  // namespace

std::vector<AllreduceMeasurement> readAllreduceCsv(const std::string& path, const std::string& flag) {
  common::CsvFile csv = [&] {
    try {
      return common::CsvFile::read(path);
    } catch (const std::exception& e) {
      throw common::UsageError((flag + ": ") + e.what());
    }
  }();
  std::vector<AllreduceMeasurement> rows;
  try {
    const size_t backend = csv.column("backend"), topology = csv.column("topology"), world = csv.column("world_size"),
                 size = csv.column("size"), type = csv.column("type"), time = csv.column("time_us");
    for (size_t i = 0; i < csv.rows(); ++i) {
      AllreduceMeasurement m;
      m.source = path + ":" + std::to_string(csv.line(i));
      m.backend = csv.text(i, backend);
      if (!comm::backendNames().contains(m.backend))
        csv.fail(i, backend, "'" + m.backend + "' is no backend (" + comm::backendNames().joined() + ")");
      m.topology = csv.text(i, topology);
      m.type = csv.text(i, type);
      const int64_t w = csv.integer(i, world);
      if (w < 1) csv.fail(i, world, "must be a count from 1");
      m.world = static_cast<int>(w);
      m.bytes = csv.integer(i, size);
      if (m.bytes < 0) csv.fail(i, size, "must be a byte count");
      m.seconds = csv.number(i, time) * 1e-6;
      if (!(m.seconds > 0) || !std::isfinite(m.seconds)) csv.fail(i, time, "must be a positive time");
      try {
        m.elementBytes = comm::bytesPerElement(comm::parseElementType(m.type));
        comm::Topology::parse(m.topology);
      } catch (const std::exception& e) {
        csv.fail(i, csv.column(m.elementBytes ? "topology" : "type"), e.what());
      }
      m.nodes = nodesOf(csv, i);
      if (m.world % m.nodes != 0) csv.fail(i, world, "is not a multiple of the row's nodes");
      const comm::Topology t = comm::Topology::parse(m.topology);
      if (csv.hasColumn("link_rate_bps") && !csv.text(i, csv.column("link_rate_bps")).empty()) {
        m.linkRateBps = csv.number(i, csv.column("link_rate_bps"));
        if (!(*m.linkRateBps > 0)) csv.fail(i, csv.column("link_rate_bps"), "must be a positive rate in bit/s");
      }
      m.segmentBytes = t.defaultSegmentBytes(comm::hostsFromRanksPerHost(m.world, m.world / m.nodes), m.linkRateBps);
      if (csv.hasColumn("segment_bytes") && !csv.text(i, csv.column("segment_bytes")).empty())
        m.segmentBytes = csv.integer(i, csv.column("segment_bytes"));
      rows.push_back(m);
    }
  } catch (const common::UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw common::UsageError((flag + ": ") + e.what());
  }
  if (rows.empty()) throw common::UsageError(flag + ": " + path + " has no rows");
  return rows;
}

double modelledSeconds(const AllreduceMeasurement& row, const Hardware& hardware) {
  const comm::Topology topology = comm::Topology::parse(row.topology);
  const int rpn = row.world / row.nodes;
  const Network network =
      networkFor(hardware, row.world, rpn, comm::backendNames().parse(row.backend), topology.native());
  const comm::HostLayout hosts = comm::hostsFromRanksPerHost(row.world, rpn);
  const comm::Schedule schedule = topology.native() ? comm::nativeSchedule(comm::backendNames().parse(row.backend), hosts)
                                                    : topology.schedule(hosts);
  const double seconds = simulateSchedule(schedule, network, row.bytes / row.elementBytes, row.elementBytes,
                                          topology.native() ? 0 : row.segmentBytes)
                             .seconds;
  return topology.native() ? seconds / hardware.efficiencyOf(row.backend) : seconds;
}

std::string linkClassOf(const AllreduceMeasurement& row) {
  if (row.world < 2 || row.bytes < row.elementBytes) return "";
  return row.topology == "native" ? "native" : row.nodes == 1 ? "intra" : "inter";
}

Calibration calibrate(const std::vector<AllreduceMeasurement>& all) {
  std::vector<AllreduceMeasurement> intra, inter, native;
  int ranksPerNode = 1;
  for (const AllreduceMeasurement& r : all) {
    const std::string linkClass = linkClassOf(r);
    if (linkClass.empty()) continue;
    (linkClass == "native" ? native : linkClass == "intra" ? intra : inter).push_back(r);
    if (r.nodes > 1) ranksPerNode = std::max(ranksPerNode, r.world / r.nodes);
  }
  if (intra.empty() && inter.empty())
    throw common::UsageError("--calibrate: no row of a point-to-point topology over 2 or more ranks to fit links to "
                             "(run dtbench allreduce --topology ring,... over several ranks)");
  for (const AllreduceMeasurement& r : inter)
    if (intra.empty() && r.world != r.nodes)
      throw common::UsageError("--calibrate: " + r.source + " has " + std::to_string(r.world / r.nodes) +
                               " ranks per node, but no row over one node calibrates the intra-node links: add "
                               "dtbench allreduce rows measured on one node");
  Calibration result;
  Hardware h;
  h.ranksPerNode = ranksPerNode;
  h.intra = h.inter = {1e9, 50e-6};
  if (!intra.empty()) {
    h = fitClass(intra, h, true);
    result.intraRmsLog = std::sqrt(sumSquaredLogs(intra, h) / static_cast<double>(intra.size()));
    if (inter.empty()) h.inter = h.intra;
  }
  if (!inter.empty()) {
    h = fitClass(inter, h, false);
    if (intra.empty()) h.intra = h.inter;
    result.interRmsLog = std::sqrt(sumSquaredLogs(inter, h) / static_cast<double>(inter.size()));
  }
  // Native efficiency from the rows from 1 MiB where a backend has any (its small sizes often take
  // another algorithm, whose latency the ring's model does not describe), else from all its rows.
  std::map<std::string, std::vector<double>> logs, largeLogs;
  for (const AllreduceMeasurement& r : native) {
    Hardware unit = h;
    unit.nativeEfficiency.clear();
    const double v = std::log(modelledSeconds(r, unit) / r.seconds);
    logs[r.backend].push_back(v);
    if (r.bytes >= kLargeBytes) largeLogs[r.backend].push_back(v);
  }
  for (auto& [backend, values] : largeLogs) logs[backend] = values;
  for (const auto& [backend, values] : logs) {
    double mean = 0;
    for (double v : values) mean += v / static_cast<double>(values.size());
    h.nativeEfficiency[backend] = std::exp(mean);
  }
  // The links' rate as dtbench read it, when every row over several nodes was measured at one rate:
  // what-ifs on this hardware then take dtbench's segment for it (hardware.h).
  std::set<double> rates;
  bool everyRate = true;
  for (const AllreduceMeasurement& r : all)
    if (r.nodes > 1) {
      if (r.linkRateBps) rates.insert(*r.linkRateBps);
      else everyRate = false;
    }
  if (everyRate && rates.size() == 1) h.linkRateBps = *rates.begin();
  result.hardware = h;
  for (const auto& [rows, name] : {std::pair{&intra, "intra"}, std::pair{&inter, "inter"}, std::pair{&native, "native"}})
    for (const AllreduceMeasurement& r : *rows) result.rows.push_back({r, name, modelledSeconds(r, h)});
  return result;
}

}  // namespace dtbench::predict
