#include "run/run_facts.h"

#include <cmath>
#include <exception>
#include <functional>
#include <stdexcept>
#include <utility>

#include "common/cluster_file.h"
#include "run/config_schema.h"

namespace dtbench::run {
namespace {

using json = nlohmann::json;

[[noreturn]] void wrong(const char* takes, const json& value) {
  throw std::invalid_argument(std::string("takes ") + takes + ", got " + value.dump());
}

int64_t whole(const json& v) {
  if (!v.is_number_integer()) wrong("a whole number", v);
  return v.get<int64_t>();
}

std::string text(const json& v) {
  if (!v.is_string()) wrong("a string", v);
  return v.get<std::string>();
}

std::optional<std::string> textOrNull(const json& v) { return v.is_null() ? std::nullopt : std::optional(text(v)); }

template <typename T, typename Read>
std::vector<T> listOf(const json& v, Read read) {
  if (!v.is_array()) wrong("a list", v);
  std::vector<T> out;
  for (const json& item : v) out.push_back(read(item));
  return out;
}

}  // namespace

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
  if (const std::optional<WorldFacts>& world = facts.world) {
    out["hosts"] = world->hosts;
    out["hosts_emulated"] = world->hostsEmulated;
    out["segment_bytes"] = world->segmentBytes ? json(*world->segmentBytes) : json(nullptr);
    if (world->buckets) {
      out["buckets"] = world->buckets->parameters;
      out["bucket_elements"] = world->buckets->elements;
      out["bucket_dtypes"] = world->buckets->dtypes;
    }
  }
  return out;
}

RunRecord readConfigJson(const json& config, std::vector<std::string>& problems) {
  RunRecord record;
  record.settings = readSettings(config, problems);
  if (!config.is_object()) return record;
  RunFacts& f = record.facts;
  // Each key present is read by its own reader; a value of another type is named and skipped.
  const auto read = [&](const char* key, const std::function<void(const json&)>& reader) {
    if (!config.contains(key)) return;
    try {
      reader(config.at(key));
    } catch (const std::exception& e) {
      problems.push_back(std::string("config.json: ") + key + " " + e.what());
    }
  };
  read("rank", [&](const json& v) { f.rank = static_cast<int>(whole(v)); });
  read("environment", [&](const json& v) {
    if (!v.is_object()) wrong("an object", v);
    f.environment = v;
  });
  read("slurm_job_id", [&](const json& v) {
    // A whole number is a job id too (sacct's JobID is text: "1234", "1234_5").
    f.slurmJobId = v.is_number_integer() ? std::optional(std::to_string(v.get<int64_t>())) : textOrNull(v);
  });
  read("model_parameters", [&](const json& v) { f.modelParameters = whole(v); });
  read("train_samples", [&](const json& v) { f.trainSamples = whole(v); });
  read("test_samples", [&](const json& v) { f.testSamples = whole(v); });
  read("dp_devices", [&](const json& v) { f.dpDevices = whole(v); });
  read("cluster_file", [&](const json& v) { f.clusterFile = textOrNull(v); });
  read("link_rate_bps", [&](const json& v) {
    if (v.is_null()) return;
    if (!v.is_object()) wrong("an object {host: bits per second} or null", v);
    std::map<std::string, std::optional<double>> rates;
    for (const auto& [host, rate] : v.items()) {
      if (!rate.is_null() && !rate.is_number()) wrong("a number or null for every host", v);
      rates[host] = rate.is_null() ? std::nullopt : std::optional(rate.get<double>());
    }
    f.linkRateBps = std::move(rates);
  });
  if (config.contains("hosts")) {
    WorldFacts world;
    read("hosts", [&](const json& v) { world.hosts = listOf<std::string>(v, text); });
    read("hosts_emulated", [&](const json& v) {
      if (!v.is_boolean()) wrong("true or false", v);
      world.hostsEmulated = v.get<bool>();
    });
    read("segment_bytes", [&](const json& v) { world.segmentBytes = v.is_null() ? std::nullopt : std::optional(whole(v)); });
    if (config.contains("bucket_elements")) {
      BucketFacts buckets;
      read("buckets", [&](const json& v) {
        buckets.parameters = listOf<std::vector<int64_t>>(v, [](const json& b) { return listOf<int64_t>(b, whole); });
      });
      read("bucket_elements", [&](const json& v) { buckets.elements = listOf<int64_t>(v, whole); });
      read("bucket_dtypes", [&](const json& v) { buckets.dtypes = listOf<std::string>(v, text); });
      world.buckets = std::move(buckets);
    }
    f.world = std::move(world);
  }
  return record;
}

const std::vector<std::string>& factKeys() {
  static const std::vector<std::string> keys{"rank",          "environment",     "slurm_job_id",  "model_parameters",
                                             "train_samples", "test_samples",    "dp_devices",    "cluster_file",
                                             "link_rate_bps", "hosts",           "hosts_emulated", "segment_bytes",
                                             "buckets",       "bucket_elements", "bucket_dtypes"};
  return keys;
}

}  // namespace dtbench::run
