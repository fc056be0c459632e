#include "experiments/report/configuration.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <utility>

#include "experiments/report/placement.h"

namespace dtbench::report {

std::string linkRatesText(const RunData& run) {
  if (!run.config.is_object() || !run.config.contains("link_rate_bps") || !run.config["link_rate_bps"].is_object())
    return "";
  std::set<double> rates;
  bool unshaped = false;
  for (const auto& [host, rate] : run.config["link_rate_bps"].items()) {
    if (rate.is_number() && rate.get<double>() > 0) rates.insert(rate.get<double>());
    else unshaped = true;  // null: the host's link is not shaped
  }
  std::string text;
  for (const double rate : rates) {
    char number[32];
    std::snprintf(number, sizeof number, "%g", rate / 1e9);
    text += (text.empty() ? "" : "/") + std::string(number);
  }
  if (!text.empty()) text += " Gbps";
  if (unshaped) text += (text.empty() ? "" : "/") + std::string("unshaped");
  return text.empty() ? "" : ", links " + text;
}

Configuration configurationOf(const RunData& run) {
  Configuration c;
  c.model = run.model();
  c.dataset = run.dataset();
  c.device = run.configText("device", "cpu");
  c.mode = run.configText("mode", "ddp");
  // Numerics and memory format change the step time for every world size alike: part of the mode,
  // so an AMP run is neither a repeat nor the baseline of a float32 one.
  if (const std::string amp = run.configText("amp", "off"); amp != "off") c.mode += ", amp " + amp;
  if (run.configFlag("channels_last", false)) c.mode += ", channels-last";
  c.batch = run.batchSize();
  c.world = run.worldSize();
  if (c.world > 1) {
    const std::string sync = run.configText("sync", "ssgd");
    c.setup = run.configText("backend", "?") + "/" + run.configText("topology", "?") + " " + sync;
    if (sync == "ssgd" && !run.configFlag("overlap", true)) c.setup += ", no overlap";
    const double bucketMb = run.configNumber("bucket_mb", 25.0);
    if (sync == "ssgd" && std::abs(bucketMb - 25.0) > 1e-9) {
      char text[48];
      std::snprintf(text, sizeof text, ", bucket %g MB", bucketMb);
      c.setup += text;
    }
    if (run.configFlag("local_bn_stats", false)) c.setup += ", local BN";
    // Injected impairment (--inject-*): runs with different impairments are different setups.
    for (const auto& [key, format] : {std::pair{"inject_delay_ms", ", delay %g ms"}, {"inject_rate_gbps", ", rate %g Gbps"},
                                      {"inject_loss_pct", ", loss %g%%"}}) {
      if (const double value = run.configNumber(key, 0); value > 0) {
        char text[48];
        std::snprintf(text, sizeof text, format, value);
        c.setup += text;
      }
    }
    // The emulated cluster's shaped links: runs over other link rates are other setups.
    c.setup += linkRatesText(run);
  }
  const Placement placement = placementOf(run);
  c.nodes = placement.nodes;
  c.placement = placement.text();
  return c;
}

std::string describe(const Configuration& c) {
  std::string text = c.model + " " + c.dataset + " B=" + std::to_string(c.batch) + " N=" + std::to_string(c.world);
  if (c.device != "cpu") text += " " + c.device;
  if (c.mode != "ddp") text += " mode " + c.mode;
  if (!c.setup.empty()) text += " " + c.setup;
  if (!c.placement.empty()) text += (c.setup.empty() ? " " : ", ") + c.placement;
  return text;
}

}  // namespace dtbench::report
