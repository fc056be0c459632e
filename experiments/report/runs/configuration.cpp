#include "experiments/report/runs/configuration.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <utility>
#include <vector>

#include "run/compression.h"
#include "run/config_schema.h"
#include "run/device_peaks.h"
#include "experiments/report/runs/placement.h"
#include "experiments/report/runs/setup_label.h"

namespace dtbench::report {

std::string linkRatesText(const RunData& run) {
  if (!run.facts.linkRateBps) return "";
  std::set<double> rates;
  bool unshaped = false;
  for (const auto& [host, rate] : *run.facts.linkRateBps) {
    if (rate && *rate > 0) rates.insert(*rate);
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

namespace {

// A GPU the peak table identifies goes by its datasheet's name, whatever the driver's spelling
// ("NVIDIA A100-SXM4-80GB" and "NVIDIA A100-SXM-80GB" are both "NVIDIA A100 SXM4 80GB"), with its memory
// size where the part comes in several (a V100 SXM2 of 16 or 32 GB, told from memory_bytes); any other by
// the name it reported.
std::string gpuModel(const run::DeviceFacts& device) {
  const run::GpuPeaks* part = run::identifyGpu(device);
  if (part == nullptr) return device.model;
  if (part->memoryGib.size() == 1) return part->part;
  if (!device.memoryBytes) return device.model;  // its name tells the sizes apart; the facts do not
  const double gib = static_cast<double>(*device.memoryBytes) / (1024.0 * 1024.0 * 1024.0);
  for (const int size : part->memoryGib)
    if (gib >= 0.85 * size && gib <= 1.05 * size) return part->part + " " + std::to_string(size) + "GB";
  return device.model;
}

}  // namespace

std::string gpuModels(const run::RunFacts& facts) {
  std::vector<std::string> models;
  for (const run::DeviceFacts& d : facts.devices) {
    if (d.type != "cuda") continue;
    const std::string model = gpuModel(d);
    if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
  }
  std::string text;
  for (const std::string& model : models) text += (text.empty() ? "" : " + ") + model;
  return text;
}

const std::vector<std::string>& configurationSettingKeys() {
  static const std::vector<std::string> keys = [] {
    // Said by the other fields of the key.
    static const std::set<std::string> represented = {
        "model",       "dataset",        "device",          "mode",           "amp",
        "channels_last", "batch_size",   "world_size",      "backend",        "topology",
        "sync",        "overlap",        "bucket_mb",       "local_bn_stats", "inject_delay_ms",
        "inject_rate_gbps", "inject_loss_pct", "ranks_per_host"};
    // Where the data and results live, how long the run goes and how large its test set is, its seed
    // (repeats may differ in it), rendezvous, timeouts, logging and the command line. Whether the run
    // evaluates stays in the key: runs recorded before the ranks met after rank 0's evaluation hold it
    // in T(N) (docs/report.md, "What T(N) includes"), so an evaluated run and a --no-eval one are never
    // repeats or each other's baseline.
    static const std::set<std::string> unrelated = {
        "data_dir",  "download",    "download_url", "download_md5", "synthetic_test_size", "epochs",
        "max_steps", "test_batch_size", "seed",      "out",          "timeline",
        "checkpoint_every", "resume", "quiet",      "rank",         "master_addr",         "master_port",
        "store_path", "gloo_iface", "timeout_s",    "message_log",  "command_line"};
    std::vector<std::string> out;
    for (const run::Setting& setting : run::settings())
      if (setting.recorded && setting.get && !represented.count(setting.key) && !unrelated.count(setting.key))
        out.push_back(setting.key);
    return out;
  }();
  return keys;
}

const std::set<std::string>& multiRankSettingKeys() {
  static const std::set<std::string> keys = {"compress", "compress_rank", "compress_start", "check_every",
                                             "inject_rto_ms"};
  return keys;
}

std::map<std::string, std::string> singleRankSettings(std::map<std::string, std::string> settings) {
  for (const std::string& key : multiRankSettingKeys()) settings.erase(key);
  return settings;
}

void nameDifferingSettings(std::vector<Configuration*> configurations) {
  // Among the configurations that hold the key (a single rank's lacks the multi-rank ones).
  std::set<std::string> differing;
  for (const std::string& key : configurationSettingKeys()) {
    std::set<std::string> values;
    for (const Configuration* c : configurations)
      if (const auto it = c->settings.find(key); it != c->settings.end()) values.insert(it->second);
    if (values.size() > 1) differing.insert(key);
  }
  // A multi-rank setting names the setup ("gloo/ring ssgd, compress=powersgd"), which a baseline has none of;
  // the others the mode, which the baseline shares.
  for (Configuration* c : configurations)
    for (const std::string& key : configurationSettingKeys())
      if (const auto it = c->settings.find(key); differing.count(key) && it != c->settings.end())
        (multiRankSettingKeys().count(key) ? c->setup : c->mode) += ", " + key + "=" + it->second;
}

Configuration configurationOf(const RunData& run) {
  Configuration c;
  c.model = run.model();
  c.dataset = run.dataset();
  const run::RunConfig& s = run.settings;
  c.device = run::deviceNames().name(s.device);
  // A GPU's model is part of the device (config.json's devices, recorded since they existed): runs on
  // other GPU models never share a series or a baseline, where a speedup would compare the GPUs.
  if (s.device == run::DeviceKind::kCuda) {
    const std::string models = gpuModels(run.facts);
    if (!models.empty()) c.device += " " + models;
  }
  c.mode = run::modeNames().name(s.mode);
  // Numerics and memory format change the step time for every world size alike: part of the mode,
  // so an AMP run is neither a repeat nor the baseline of a float32 one.
  if (s.precision.amp != run::Amp::kOff) c.mode += std::string(", amp ") + run::ampNames().name(s.precision.amp);
  if (s.precision.channelsLast) c.mode += ", channels-last";
  for (const std::string& key : configurationSettingKeys()) {
    const nlohmann::json value = run::findSettingByKey(key)->get(s);
    c.settings[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  c.batch = run.batchSize();
  c.world = run.worldSize();
  // --mode dp: one process drives every GPU it sees, and its N is those GPUs (config.json's dp_devices), so
  // that its runs on 1, 2 and 4 GPUs are a series, not repeats.
  if (s.mode == run::ParallelMode::kDp && run.facts.dpDevices && *run.facts.dpDevices > 0) {
    c.world = static_cast<int>(*run.facts.dpDevices);
    if (c.world > 1) c.setup = "DataParallel, one process";
  }
  // One rank communicates nothing: what only several ranks do (compress, ...) is no part of its key, so runs of
  // one rank with other --compress flags are repeats of one baseline, shared by every compression's series.
  if (run.worldSize() == 1)
    for (const std::string& key : multiRankSettingKeys()) c.settings.erase(key);
  // --compress-rank and --compress-start act on the compressions that take them alone (PowerSGD).
  const run::CompressionRow& compression = run::compressionRow(s.sync.compress);
  if (!compression.takesRank) c.settings.erase("compress_rank");
  if (!compression.takesStart) c.settings.erase("compress_start");
  if (run.worldSize() > 1) {
    c.setup = setupLabel(s.comm.connection.backend, s.comm.topology, s.sync.kind, s.sync.overlap, s.sync.bucketMb,
                         s.sync.localBnStats);
    // Injected impairment (--inject-*): runs with different impairments are different setups.
    for (const auto& [value, format] : {std::pair{s.impairment.delayMs, ", delay %g ms"},
                                        {s.impairment.rateGbps, ", rate %g Gbps"},
                                        {s.impairment.lossPercent, ", loss %g%%"}}) {
      if (value > 0) {
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
