#include "experiments/report/runs/allreduce_model.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "comm/element_type.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology/ring.h"
#include "comm/topology/schedule.h"
#include "common/lists.h"
#include "run/settings.h"

namespace dtbench::report {
namespace {

int64_t elementBytes(const std::string& dtype) {
  try {
    return comm::bytesPerElement(comm::parseElementType(dtype));
  } catch (const std::invalid_argument&) {
    throw std::runtime_error("config.json names an element type '" + dtype + "' (expected " +
                             common::joinList(comm::elementTypeNames()) + ")");
  }
}

comm::HostLayout hostsOf(const RunData& run, int world) {
  const int perHost = run.settings.comm.ranksPerHost;
  if (perHost > 0) return comm::hostsFromRanksPerHost(world, perHost);
  if (run.facts.world && static_cast<int>(run.facts.world->hosts.size()) == world)
    return comm::hostsFromNames(run.facts.world->hosts);
  return comm::hostsFromRanksPerHost(world, world);  // unknown: one host
}

}  // namespace

AllreduceModel allreduceModel(const RunData& run, bool uncompressed) {
  AllreduceModel model;
  const int world = run.worldSize();
  if (world < 2) {
    model.why = "one rank";
    return model;
  }
  if (run.settings.sync.kind != run::Sync::kSsgd) {
    model.why = "pair averaging has no all-reduce";
    return model;
  }
  std::vector<int64_t> elements;
  std::vector<std::string> dtypes;
  const std::optional<run::BucketFacts> buckets = run.facts.world ? run.facts.world->buckets : std::nullopt;
  if (buckets) {
    elements = buckets->elements;
    // A run written before bucket_dtypes was recorded sent float32 buckets.
    if (!buckets->dtypes.empty())
      dtypes = buckets->dtypes;
    else
      dtypes.assign(elements.size(), "float32");
    if (dtypes.size() != elements.size())
      throw std::runtime_error("config.json: bucket_dtypes has " + std::to_string(dtypes.size()) +
                               " entries, bucket_elements " + std::to_string(elements.size()));
  } else {
    if (run.facts.modelParameters <= 0)
      throw std::runtime_error("config.json has neither bucket_elements nor model_parameters");
    elements = {run.facts.modelParameters};
    dtypes = {"float32"};
    model.fromParameters = true;
  }
  model.available = true;
  model.buckets = static_cast<int>(elements.size());
  for (size_t b = 0; b < elements.size(); ++b) model.uncompressedBytes += elements[b] * elementBytes(dtypes[b]);
  model.compress = run::compressionNames().name(run.settings.sync.compress);
  // Compressed: each bucket's all-reduces as config.json lists them (runs written before
  // bucket_collectives all-reduced their buckets as they were).
  if (!uncompressed && buckets && !buckets->collectives.empty()) {
    if (buckets->collectives.size() != elements.size())
      throw std::runtime_error("config.json: bucket_collectives has " + std::to_string(buckets->collectives.size()) +
                               " buckets, bucket_elements " + std::to_string(elements.size()));
    elements.clear();
    dtypes.clear();
    for (const std::vector<run::CollectiveFacts>& bucket : buckets->collectives)
      for (const run::CollectiveFacts& c : bucket) {
        elements.push_back(c.elements);
        dtypes.push_back(c.dtype);
      }
  }
  if (uncompressed) model.compress = "none";
  model.dtype = dtypes.empty() ? "float32" : dtypes.front();
  for (const std::string& d : dtypes)
    if (d != model.dtype) model.dtype = "mixed";
  model.sentPerStep.assign(world, 0);
  model.matrixPerStep.assign(world, std::vector<int64_t>(world, 0));
  const std::string topology = run.settings.comm.topology.name();
  for (size_t b = 0; b < elements.size(); ++b) {
    const int64_t size = elementBytes(dtypes[b]);
    const int64_t bytes = elements[b] * size;
    model.gradientBytes += bytes;
    model.bucketElements.push_back(elements[b]);
    model.bucketElementBytes.push_back(size);
    if (topology == "native") {
      const int64_t perRank = comm::ringBytesPerRank(bytes, world);
      for (int r = 0; r < world; ++r) model.matrixPerStep[r][(r + 1) % world] += perRank;
    } else {
      const comm::Schedule schedule = comm::makeSchedule(topology, hostsOf(run, world));
      const auto traffic = comm::scheduleTraffic(schedule, elements[b], size);
      for (int s = 0; s < world; ++s)
        for (int d = 0; d < world; ++d) model.matrixPerStep[s][d] += traffic[s][d];
    }
  }
  for (int s = 0; s < world; ++s)
    for (int d = 0; d < world; ++d) model.sentPerStep[s] += model.matrixPerStep[s][d];
  return model;
}

}  // namespace dtbench::report
