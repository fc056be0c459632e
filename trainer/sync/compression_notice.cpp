#include "trainer/sync/compression_notice.h"

namespace dtbench::trainer {

std::string compressionNotice(const run::RunConfig& config, int worldSize,
                              const std::vector<std::vector<BucketCollective>>& collectives, int64_t lastStep) {
  const run::CompressionRow& row = run::compressionRow(config.sync.compress);
  if (!row.compresses || config.sync.kind != run::Sync::kSsgd) return "";
  const std::string flag = "--compress " + std::string(row.name);
  if (worldSize == 1)
    return flag + " on one rank: nothing is communicated, so nothing is compressed; the run measures the "
                  "single-rank baseline every compression's speedup is taken against";
  if (!row.takesRank) return "";
  bool factors = false;
  for (const std::vector<BucketCollective>& bucket : collectives)
    for (const BucketCollective& c : bucket) factors = factors || c.what == run::kFactorPart;
  if (!factors)
    return flag + " at --compress-rank " + std::to_string(config.sync.compressRank) + " compresses no gradient of " +
           config.model + " (each is a vector, or a matrix of n × m with (n + m)·R·2 >= n·m): every step "
           "all-reduces the gradients whole; a lower --compress-rank compresses more";
  if (row.takesStart && lastStep <= config.sync.compressStart)
    return flag + ": all " + std::to_string(lastStep) + " steps of the run are within --compress-start " +
           std::to_string(config.sync.compressStart) + " and go uncompressed; lower --compress-start or run longer";
  return "";
}

std::string compressionLabel(const run::RunConfig& config) {
  const run::CompressionRow& row = run::compressionRow(config.sync.compress);
  if (!row.compresses) return "";
  std::string label = ", compress " + std::string(row.name);
  if (row.takesRank) label += " rank " + std::to_string(config.sync.compressRank);
  if (row.takesStart) label += " from step " + std::to_string(config.sync.compressStart + 1);
  return label;
}

}  // namespace dtbench::trainer
