#pragma once
// Compression: how --sync ssgd's gradient buckets travel (--compress; docs/design.md, "Gradient
// compression"), each one a row of facts (CompressionRow) that every file outside this one and the
// codecs (trainer/sync/bucket_compression.h) asks instead of comparing Compression values:
//   none      each bucket as it is (float32), divided by N after the sum;
//   fp16      cast to float16 and divided by N before a 16-bit all-reduce, cast back;
//   bf16      the same in bfloat16;
//   powersgd  rank-R factors P and Q of the matrices worth it, the rest whole (trainer/sync/powersgd.h).
// It lives in run/ beside the run's other closed sets (run/settings.h) because it is a setting of a
// run, whose settings (--compress-rank, --compress-start) and refusals (--sync pairavg, --mode dp,
// --cuda-graph) are the run's own; without LibTorch, so that `dtbench predict` and the report ask the
// same rows the trainer does. What a bucket sends is one function, bucketSends(): the trainer's codecs
// record it (config.json's bucket_collectives) and predict lays it out; no one else computes it.
//
// Adding a compression (docs/design.md, "Adding a compression"): a value of the enum, its row (and its
// sends function) in compression.cpp, its codec class in trainer/sync/ and its factory line in
// trainer/sync/bucket_compression.cpp. Nothing else names a compression.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/element_type.h"
#include "common/named_values.h"

namespace dtbench::run {

struct RunConfig;

enum class Compression { kNone, kFp16, kBf16, kPowerSgd };

// A gradient bucket as what it sends depends on it: the trainer's (trainer/sync/bucketed_allreduce.h)
// and predict's (experiments/predict/step_model.cpp) alike.
struct BucketToSend {
  std::vector<std::vector<int64_t>> shapes;  // each gradient's shape, in bucket order
  int64_t elements = 0;                      // its gradients' elements, plus the stop flag where it carries it
  bool carriesFlag = false;                  // the last bucket: the stop flag follows its gradients
  comm::ElementType type = comm::ElementType::kFloat32;  // its buffer's element type
};

// One all-reduce of a bucket's compressed step (config.json's bucket_collectives, one entry).
struct BucketSend {
  std::string what;  // "gradients" (none, fp16, bf16), or powersgd's "uncompressed", "p", "q"
  int64_t elements = 0;
  comm::ElementType type = comm::ElementType::kFloat32;
};

// The part that holds a low-rank compression's first factor: a step that sends it compressed a gradient.
inline constexpr const char* kFactorPart = "p";

struct CompressionRow {
  Compression compression;
  const char* name;   // --compress's value, config.json's compress
  const char* codec;  // its codec class (trainer/sync/), made through the factory table there
  const char* help;   // its words in --compress's help
  // Whether it changes what a bucket sends. Every row that does is refused by --sync pairavg (no
  // all-reduce of gradients), --mode dp (no all-reduce between ranks), --cuda-graph (it decides on the
  // host, step by step; checkCompression) and gradients other than float32 (trainer/sync/bucketed_allreduce.cpp),
  // and keeps per-rank state that a resume cannot deal to another world size. At one rank it is the
  // single-rank baseline of its speedups.
  bool compresses;
  // The settings it takes: --compress-rank R (config.json's compress_rank) and --compress-start K
  // (compress_start: its first K steps all-reduce every bucket whole in float32). A row that takes a rank
  // sends a gradient compressed only where the gradient is worth it: a step compressed some gradient
  // only where it sends kFactorPart, and predict needs every gradient's shape.
  bool takesRank;
  bool takesStart;
  // --compress's help: every row's words, "none (float32), fp16 (...), bf16 (...) or powersgd (...)".
std::string compressionHelp();

// What one compressed step of `bucket` all-reduces, in order; `rank`: --compress-rank.
  std::vector<BucketSend> (*sends)(const BucketToSend& bucket, int64_t rank);
};

// Every compression's row, in --compress's order (none, fp16, bf16, powersgd).
const std::vector<CompressionRow>& compressionRows();
const CompressionRow& compressionRow(Compression compression);

// none fp16 bf16 powersgd; parse() throws common::UsageError naming --compress and the valid names.
const common::NamedValues<Compression>& compressionNames();

// --compress's help: every row's words, "none (float32), fp16 (...), bf16 (...) or powersgd (...)".
std::string compressionHelp();

// What one compressed step of `bucket` all-reduces under `compression` at --compress-rank `rank`: the
// one account of it, which the trainer records and predict models.
std::vector<BucketSend> bucketSends(Compression compression, const BucketToSend& bucket, int64_t rank);

// Throws common::UsageError when `config`'s --compress compresses and another setting refuses it
// (--sync pairavg, --mode dp, --cuda-graph).
void checkCompression(const RunConfig& config);

}  // namespace dtbench::run
