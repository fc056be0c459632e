#include "run/run_facts.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <stdexcept>
#include <utility>

#include "comm/element_type.h"
#include "common/cluster_file.h"
#include "run/config_schema.h"
#include "run/compression.h"
#include "run/json_values.h"

namespace dtbench::run {
using json = nlohmann::json;

json configJson(const RunConfig& settings, const RunFacts& facts) {
  json out = settingsJson(settings);
  out["rank"] = facts.rank;
  out["environment"] = facts.environment;
  out["slurm_job_id"] = facts.slurmJobId ? json(*facts.slurmJobId) : json(nullptr);
  out["model_parameters"] = facts.modelParameters;
  out["train_samples"] = facts.trainSamples;
  out["test_samples"] = facts.testSamples;
  if (facts.dpDevices) out["dp_devices"] = *facts.dpDevices;
  out["cluster_file"] = facts.clusterFile ? json(*facts.clusterFile) : json(nullptr);
  if (facts.linkRateBps) {
    json rates = json::object();
    for (const auto& [host, rate] : *facts.linkRateBps) rates[host] = rate ? common::rateJson(*rate) : json(nullptr);
    out["link_rate_bps"] = rates;
  } else {
    out["link_rate_bps"] = nullptr;
  }
  out["devices"] = json::array();
  for (const DeviceFacts& device : facts.devices) out["devices"].push_back(deviceJson(device));
  if (facts.speedOfLight) out["speed_of_light"] = speedOfLightJson(*facts.speedOfLight);
  if (facts.segments.size() > 1) out["segments"] = segmentsJson(facts.segments);
  if (const std::optional<WorldFacts>& world = facts.world) {
    out["hosts"] = world->hosts;
    out["hosts_emulated"] = world->hostsEmulated;
    out["segment_bytes"] = world->segmentBytes ? json(*world->segmentBytes) : json(nullptr);
    if (world->buckets) {
      out["buckets"] = world->buckets->parameters;
      out["bucket_elements"] = world->buckets->elements;
      out["bucket_dtypes"] = world->buckets->dtypes;
      json collectives = json::array();
      for (const std::vector<CollectiveFacts>& bucket : world->buckets->collectives) {
        json list = json::array();
        for (const CollectiveFacts& c : bucket)
          list.push_back({{"what", c.what}, {"elements", c.elements}, {"dtype", c.dtype}});
        collectives.push_back(std::move(list));
      }
      if (!world->buckets->collectives.empty()) out["bucket_collectives"] = std::move(collectives);
    }
  }
  return out;
}

json deviceJson(const DeviceFacts& d) {
  json out = {{"type", d.type}, {"model", d.model}, {"host", d.host}, {"boot_id", d.bootId}};
  const auto put = [&out](const char* key, const auto& value) {
    if (value) out[key] = *value;
  };
  put("cores", d.cores);
  put("threads", d.threads);
  put("index", d.index);
  put("sm_count", d.smCount);
  put("memory_bytes", d.memoryBytes);
  put("clock_mhz", d.clockMhz);
  put("compute_capability", d.computeCapability);
  put("driver", d.driverVersion);
  put("cuda_runtime", d.cudaRuntimeVersion);
  return out;
}

DeviceFacts readDeviceJson(const json& device) {
  if (!device.is_object()) wrongValue("an object per rank", device);
  std::vector<std::string> problems;
  const JsonFields fields(device, "", problems);
  DeviceFacts d;
  // Counts that were measured are at least 1 (a rank with 0 cores would make every machine look
  // oversubscribed); an index at least 0; a clock above 0.
  const auto atLeast = [](int64_t least) {
    return [least](const json& v) {
      const int64_t number = wholeValue(v);
      if (number < least) wrongValue(least == 0 ? "a whole number >= 0" : "a whole number >= 1", v);
      return number;
    };
  };
  fields.read("type", [&](const json& v) {
    d.type = textValue(v);
    if (d.type != "cpu" && d.type != "cuda") wrongValue("cpu or cuda", v);
  });
  fields.read("model", [&](const json& v) { d.model = textValue(v); });
  fields.read("host", [&](const json& v) { d.host = textValue(v); });
  fields.read("boot_id", [&](const json& v) { d.bootId = textValue(v); });
  fields.read("cores", [&](const json& v) { d.cores = atLeast(1)(v); });
  fields.read("threads", [&](const json& v) { d.threads = atLeast(1)(v); });
  fields.read("index", [&](const json& v) { d.index = atLeast(0)(v); });
  fields.read("sm_count", [&](const json& v) { d.smCount = atLeast(1)(v); });
  fields.read("memory_bytes", [&](const json& v) { d.memoryBytes = atLeast(1)(v); });
  fields.read("clock_mhz", [&](const json& v) {
    const double mhz = numberValue(v);
    if (!(mhz > 0) || !std::isfinite(mhz)) wrongValue("a finite number > 0", v);
    d.clockMhz = mhz;
  });
  fields.read("compute_capability", [&](const json& v) { d.computeCapability = textValue(v); });
  fields.read("driver", [&](const json& v) { d.driverVersion = textValue(v); });
  fields.read("cuda_runtime", [&](const json& v) { d.cudaRuntimeVersion = textValue(v); });
  if (!problems.empty()) throw std::invalid_argument(problems.front());
  return d;
}

std::string devicesLabel(const RunFacts& facts) {
  std::vector<std::string> labels;
  for (const DeviceFacts& d : facts.devices)
    if (std::find(labels.begin(), labels.end(), d.label()) == labels.end()) labels.push_back(d.label());
  std::string text;
  for (const std::string& label : labels) text += (text.empty() ? "" : " + ") + label;
  return text;
}

namespace {

// What --compress sends of a bucket, against the bucket itself: where what it sends follows from the
// bucket's size and type alone (a row that takes no rank: none, fp16, bf16), exactly what bucketSends()
// gives (run/compression.h); under a low-rank compression (powersgd), whose sends follow from shapes
// config.json does not hold, its uncompressed part and, where a matrix is compressed, its factors P and
// Q in float32, which together are smaller than the bucket (a factor pair is sent only where
// (n + m)·r·2 < n·m: comm/compressed_sizes.h).
std::string bucketCollectivesProblem(const BucketFacts& buckets, Compression compress) {
  if (buckets.collectives.empty()) return "";  // written before it was recorded
  const std::string where = "bucket_collectives";
  if (buckets.collectives.size() != buckets.elements.size())
    return where + " lists " + std::to_string(buckets.collectives.size()) + " buckets, bucket_elements " +
           std::to_string(buckets.elements.size());
  if (!buckets.dtypes.empty() && buckets.dtypes.size() != buckets.elements.size())
    return "bucket_dtypes lists " + std::to_string(buckets.dtypes.size()) + " buckets, bucket_elements " +
           std::to_string(buckets.elements.size());
  for (size_t b = 0; b < buckets.elements.size(); ++b) {
    const std::vector<CollectiveFacts>& list = buckets.collectives[b];
    const int64_t elements = buckets.elements[b];
    const std::string bucket = where + " bucket " + std::to_string(b) + ": ";
    const CompressionRow& row = compressionRow(compress);
    if (!row.takesRank) {
      BucketToSend whole;
      whole.elements = elements;
      whole.carriesFlag = b + 1 == buckets.elements.size();
      try {
        if (!buckets.dtypes.empty()) whole.type = comm::parseElementType(buckets.dtypes[b]);
      } catch (const std::invalid_argument& e) {
        return "bucket_dtypes bucket " + std::to_string(b) + ": " + e.what();
      }
      const std::vector<BucketSend> sends = row.sends(whole, 0);
      bool same = list.size() == sends.size();
      for (size_t i = 0; same && i < sends.size(); ++i)
        same = list[i].what == sends[i].what && list[i].elements == sends[i].elements &&
               list[i].dtype == comm::name(sends[i].type);
      if (!same)
        return bucket + "--compress " + row.name + " sends " +
               (sends.size() == 1 ? "one all-reduce" : std::to_string(sends.size()) + " all-reduces") + " of its " +
               std::to_string(elements) + " elements in " + comm::name(sends.front().type);
      continue;
    }
    const std::string name = row.name;
    int64_t uncompressed = 0, p = 0, q = 0, sent = 0;
    for (const CollectiveFacts& c : list) {
      if (c.dtype != "float32") return bucket + name + " sends float32, not " + c.dtype;
      int64_t& slot = c.what == "uncompressed" ? uncompressed : c.what == kFactorPart ? p : c.what == "q" ? q : sent;
      if (&slot == &sent) return bucket + name + " sends uncompressed, p and q, not '" + c.what + "'";
      if (slot != 0) return bucket + "'" + c.what + "' twice";
      slot = c.elements;
    }
    if ((p > 0) != (q > 0)) return bucket + name + " sends P and Q together";
    if (uncompressed + p + q == 0) return bucket + "sends nothing";
    // The compressed matrices hold the elements not sent whole, and their factors under half of those.
    const int64_t inMatrices = elements - uncompressed;
    if (inMatrices < 0 || (p + q == 0 && inMatrices != 0) || (p + q > 0 && 2 * (p + q) >= inMatrices))
      return bucket + std::to_string(uncompressed) + " elements sent whole and " + std::to_string(p + q) +
             " in factors do not fit its " + std::to_string(elements) +
             " (the rest are compressed matrices, whose factors hold under half their elements)";
  }
  return "";
}

}  // namespace

RunRecord readConfigJson(const json& config, std::vector<std::string>& problems) {
  RunRecord record;
  record.settings = readSettings(config, problems);
  if (!config.is_object()) return record;
  RunFacts& f = record.facts;
  const JsonFields fields(config, "config.json: ", problems);
  const auto read = [&](const char* key, const std::function<void(const json&)>& reader) { fields.read(key, reader); };
  read("rank", [&](const json& v) { f.rank = static_cast<int>(wholeValue(v)); });
  read("environment", [&](const json& v) {
    if (!v.is_object()) wrongValue("an object", v);
    f.environment = v;
  });
  read("slurm_job_id", [&](const json& v) {
    // A whole number is a job id too (sacct's JobID is text: "1234", "1234_5").
    f.slurmJobId = v.is_number_integer() ? std::optional(std::to_string(v.get<int64_t>())) : textOrNull(v);
  });
  read("model_parameters", [&](const json& v) { f.modelParameters = countValue(v); });
  read("train_samples", [&](const json& v) { f.trainSamples = countValue(v); });
  read("test_samples", [&](const json& v) { f.testSamples = countValue(v); });
  read("dp_devices", [&](const json& v) { f.dpDevices = wholeValue(v); });
  read("cluster_file", [&](const json& v) { f.clusterFile = textOrNull(v); });
  read("link_rate_bps", [&](const json& v) {
    if (v.is_null()) return;
    if (!v.is_object()) wrongValue("an object {host: bits per second} or null", v);
    std::map<std::string, std::optional<double>> rates;
    for (const auto& [host, rate] : v.items()) {
      if (!rate.is_null() && !rate.is_number()) wrongValue("a number or null for every host", v);
      rates[host] = rate.is_null() ? std::nullopt : std::optional(rate.get<double>());
    }
    f.linkRateBps = std::move(rates);
  });
  read("devices", [&](const json& v) { f.devices = listValue<DeviceFacts>(v, readDeviceJson); });
  read("speed_of_light", [&](const json& v) { f.speedOfLight = readSpeedOfLightJson(v); });
  read("segments", [&](const json& v) { f.segments = readSegmentsJson(v); });
  if (config.contains("hosts")) {
    WorldFacts world;
    read("hosts", [&](const json& v) { world.hosts = listValue<std::string>(v, textValue); });
    read("hosts_emulated", [&](const json& v) {
      if (!v.is_boolean()) wrongValue("true or false", v);
      world.hostsEmulated = v.get<bool>();
    });
    read("segment_bytes", [&](const json& v) { world.segmentBytes = v.is_null() ? std::nullopt : std::optional(countValue(v)); });
    if (config.contains("bucket_elements")) {
      BucketFacts buckets;
      read("buckets", [&](const json& v) {
        buckets.parameters = listValue<std::vector<int64_t>>(v, [](const json& b) { return listValue<int64_t>(b, wholeValue); });
      });
      read("bucket_elements", [&](const json& v) { buckets.elements = listValue<int64_t>(v, countValue); });
      read("bucket_dtypes", [&](const json& v) { buckets.dtypes = listValue<std::string>(v, textValue); });
      if (config.contains("bucket_collectives"))
        read("bucket_collectives", [&](const json& v) {
          buckets.collectives = listValue<std::vector<CollectiveFacts>>(v, [](const json& bucket) {
            return listValue<CollectiveFacts>(bucket, [](const json& c) {
              if (!c.is_object() || !c.contains("what") || !c.contains("elements") || !c.contains("dtype"))
                wrongValue("an object with what, elements and dtype", c);
              return CollectiveFacts{textValue(c.at("what")), countValue(c.at("elements")), textValue(c.at("dtype"))};
            });
          });
        });
      world.buckets = std::move(buckets);
    }
    f.world = std::move(world);
  }
  // Every run of several ranks lists every rank's host: the world size's cross-check, which also keeps
  // a mistyped world size from sizing the per-rank tables of a report.
  const int world = record.settings.worldSize();
  if (world > 1 && !f.world) {
    problems.push_back("config.json: world_size " + std::to_string(world) +
                       " without a hosts list (a run of several ranks names every rank's host)");
  } else if (f.world && f.world->hosts.size() != static_cast<size_t>(world)) {
    problems.push_back("config.json: world_size " + std::to_string(world) + " but hosts names " +
                       std::to_string(f.world->hosts.size()) + " hosts, one per rank");
  }
  // One device a rank (--mode dp records its one process's).
  if (!f.devices.empty() && f.devices.size() != static_cast<size_t>(world))
    problems.push_back("config.json: devices lists " + std::to_string(f.devices.size()) + " devices for world_size " +
                       std::to_string(world) + " (one per rank)");
  if (f.world && f.world->buckets)
    if (const std::string problem = bucketCollectivesProblem(*f.world->buckets, record.settings.sync.compress);
        !problem.empty())
      problems.push_back("config.json: " + problem);
  return record;
}

RunRecord readConfigFile(const std::string& runDirectory, std::vector<std::string>& problems) {
  return readConfigJson(readJsonOrProblem(runDirectory + "/config.json", problems), problems);
}

const std::vector<std::string>& factKeys() {
  static const std::vector<std::string> keys{"rank",          "environment",     "slurm_job_id",  "model_parameters",
                                             "train_samples", "test_samples",    "dp_devices",    "cluster_file",
                                             "devices",       "speed_of_light",  "segments",
                                             "link_rate_bps", "hosts",           "hosts_emulated", "segment_bytes",
                                             "buckets",       "bucket_elements", "bucket_dtypes",  "bucket_collectives"};
  return keys;
}

}  // namespace dtbench::run
