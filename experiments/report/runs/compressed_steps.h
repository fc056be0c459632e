#pragma once
// Which of a run's steps sent their gradients compressed (--compress; docs/report.md, Table 3).
//   none       no step;
//   fp16/bf16  every step of a run of several ranks;
//   powersgd   the steps after the run's first --compress-start, and only where some gradient is
//              compressible at the run's rank (config.json's bucket_collectives hold P and Q): a step's
//              grad_collectives (batches.csv) tell which it was: one all-reduce a bucket uncompressed,
//              the bucket_collectives' count compressed. Rows written before grad_collectives existed
//              (0) are told by their global step, (epoch − 1) × the run's steps per epoch + step.
// One rank communicates nothing, so it compresses nothing.

#include <cstdint>
#include <string>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

// Whether some gradient of the run is sent compressed at all (fp16 and bf16: every one; powersgd:
// some bucket all-reduces factors P and Q, or bucket_collectives was not recorded).
bool compressesAnyGradient(const RunData& run);

// Whether `row`, one of the run's batches.csv rows, sent its gradients compressed.
bool stepCompressed(const RunData& run, const run::StepRecord& row);

// --compress as an epoch's steps sent it (`compressedSteps` of its `steps`): the codec where every step was
// compressed ("none" without --compress), "none (powersgd compressed no step)" where none was, "powersgd
// (3 of 4 steps)" in between. The report's `compress` column and configuration say it.
std::string compressionUsed(const RunData& run, int64_t compressedSteps, int64_t steps);

}  // namespace dtbench::report
