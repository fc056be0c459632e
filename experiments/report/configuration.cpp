#include "experiments/report/configuration.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace dtbench::report {

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
  }
  return c;
}

std::string describe(const Configuration& c) {
  std::string text = c.model + " " + c.dataset + " B=" + std::to_string(c.batch) + " N=" + std::to_string(c.world);
  if (c.device != "cpu") text += " " + c.device;
  if (c.mode != "ddp") text += " mode " + c.mode;
  if (!c.setup.empty()) text += " " + c.setup;
  return text;
}

}  // namespace dtbench::report
