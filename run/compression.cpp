#include "run/compression.h"

#include <stdexcept>

#include "comm/compressed_sizes.h"
#include "common/usage_error.h"
#include "run/run_config.h"

namespace dtbench::run {
namespace {

// none: the bucket in its own type, one all-reduce of all its elements.
std::vector<BucketSend> wholeBucket(const BucketToSend& bucket, int64_t /*rank*/) {
  return {{"gradients", bucket.elements, bucket.type}};
}

// fp16, bf16: the bucket cast to the 16-bit type, one all-reduce of all its elements.
template <comm::ElementType kType>
std::vector<BucketSend> castBucket(const BucketToSend& bucket, int64_t /*rank*/) {
  return {{"gradients", bucket.elements, kType}};
}

// powersgd: the gradients sent whole (and the flag) packed in float32, then, where some matrix is
// compressed, its factors P and Q in float32 (comm/compressed_sizes.h).
std::vector<BucketSend> powerSgdFactors(const BucketToSend& bucket, int64_t rank) {
  const comm::PowerSgdBucketSizes sizes = comm::powerSgdBucketSizes(bucket.shapes, rank, bucket.carriesFlag);
  std::vector<BucketSend> sends;
  if (sizes.uncompressed > 0) sends.push_back({"uncompressed", sizes.uncompressed, comm::ElementType::kFloat32});
  if (sizes.p > 0) {
    sends.push_back({kFactorPart, sizes.p, comm::ElementType::kFloat32});
    sends.push_back({"q", sizes.q, comm::ElementType::kFloat32});
  }
  return sends;
}

std::vector<CompressionRow> makeCompressionRows() {
  std::vector<CompressionRow> rows;
  rows.push_back({Compression::kNone, "none", "NoCompression", "none (float32)",
                  /*compresses=*/false, /*takesRank=*/false, /*takesStart=*/false, wholeBucket});
  rows.push_back({Compression::kFp16, "fp16", "HalfPrecisionCompression",
                  "fp16 (each bucket cast and divided by the world size before a float16 all-reduce, as PyTorch's "
                  "fp16_compress_hook)",
                  true, false, false, castBucket<comm::ElementType::kFloat16>});
  rows.push_back({Compression::kBf16, "bf16", "HalfPrecisionCompression",
                  "bf16 (the same in bfloat16, as PyTorch's bf16_compress_hook)", true, false, false,
                  castBucket<comm::ElementType::kBFloat16>});
  rows.push_back({Compression::kPowerSgd, "powersgd", "PowerSgd",
                  "powersgd (every matrix-shaped gradient whose rank-R factors are at most half its size sent as the "
                  "two factors P and Q, with error feedback and warm start, as PyTorch's powerSGD_hook; the rest "
                  "all-reduced whole)",
                  true, /*takesRank=*/true, /*takesStart=*/true, powerSgdFactors});
  return rows;
}

}  // namespace

const std::vector<CompressionRow>& compressionRows() {
  static const std::vector<CompressionRow> rows = makeCompressionRows();
  return rows;
}

const CompressionRow& compressionRow(Compression compression) {
  for (const CompressionRow& row : compressionRows())
    if (row.compression == compression) return row;
  throw std::logic_error("compressionRow: compression " + std::to_string(static_cast<int>(compression)) +
                         " has no row");
}

const common::NamedValues<Compression>& compressionNames() {
  static const common::NamedValues<Compression> names = [] {
    std::vector<common::NamedValue<Compression>> values;
    for (const CompressionRow& row : compressionRows()) values.push_back({row.compression, row.name});
    return common::NamedValues<Compression>({"gradient compression", "gradient compressions"}, "--compress", values);
  }();
  return names;
}

std::string compressionHelp() {
  const std::vector<CompressionRow>& rows = compressionRows();
  std::string text;
  for (size_t i = 0; i < rows.size(); ++i)
    text += std::string(i == 0 ? "" : i + 1 == rows.size() ? " or " : ", ") + rows[i].help;
  return text;
}

std::vector<BucketSend> bucketSends(Compression compression, const BucketToSend& bucket, int64_t rank) {
  return compressionRow(compression).sends(bucket, rank);
}

void checkCompression(const RunConfig& config) {
  const CompressionRow& row = compressionRow(config.sync.compress);
  if (!row.compresses) return;
  const std::string compress = "--compress " + std::string(row.name);
  if (config.sync.kind != Sync::kSsgd)
    throw common::UsageError(compress + " compresses the gradients --sync ssgd all-reduces; --sync pairavg averages "
                             "parameters with one partner: use --sync ssgd, or --compress none");
  if (config.mode == ParallelMode::kDp)
    throw common::UsageError(compress + " compresses the all-reduce between ranks; --mode dp has one process and no "
                             "all-reduce: use --mode ddp, or --compress none");
  if (config.gpu.cudaGraph)
    throw common::UsageError(compress + " decides on the host, step by step, what each bucket sends (and PowerSGD "
                             "keeps per-rank state), which a captured step cannot replay: leave out --cuda-graph, or "
                             "use --compress none");
}

}  // namespace dtbench::run
