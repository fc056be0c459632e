#pragma once
// What a run's --compress will leave uncompressed, said before it trains (dtbench train prints it on
// rank 0): a run of one rank communicates nothing, so nothing is compressed (it is the single-rank
// baseline of every compression); a PowerSGD whose rank R compresses no gradient of the model (each a
// vector, or a matrix too small: (n + m)·R·2 >= n·m) all-reduces every step whole; a run whose steps all
// fall within --compress-start compresses none. "" where every step after the first --compress-start
// sends some gradient compressed.

#include <cstdint>
#include <string>
#include <vector>

#include "run/run_config.h"
#include "trainer/sync/bucket_compression.h"

namespace dtbench::trainer {

// `collectives`: what a compressed step of each bucket all-reduces (BucketedAllreduce::bucketCollectives);
// `lastStep`: the run's last global step (epochs × steps per epoch).
std::string compressionNotice(const run::RunConfig& config, int worldSize,
                              const std::vector<std::vector<BucketCollective>>& collectives, int64_t lastStep);

// The compression in a few words for the run's closing line: "" for none, ", compress fp16",
// ", compress powersgd rank 2 from step 3".
std::string compressionLabel(const run::RunConfig& config);

}  // namespace dtbench::trainer
