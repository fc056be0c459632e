#pragma once
// The closed sets of a run's settings: what each flag of `dtbench train` chooses among, as an enum
// and its names (common/named_values.h). A flag's text becomes the enum once, at the command line;
// the name is written back only where text is the contract (config.json, the report's tables), and
// the tools that read run directories turn it into the enum again (run/config_schema.h).

#include "common/named_values.h"
#include "run/compression.h"

namespace dtbench::run {

enum class DatasetKind { kCifar10, kFashionMnist, kSynthetic };
enum class DeviceKind { kCpu, kCuda };
enum class OptimizerKind { kSgd, kAdam, kRmsprop };
enum class Amp { kOff, kBf16, kFp16 };  // autocast's type: none, bfloat16, float16
enum class Sync { kSsgd, kPairavg };
// How --sync ssgd's gradient buckets travel (Compression, compressionNames()): run/compression.h, its rows.
enum class ParallelMode { kDdp, kDp };  // ddp: one process per rank; dp: one process, several local GPUs
// How a step's phases are timed (trainer/step/step_timer.h): device events read back later, a device
// synchronization at every phase boundary, or not at all.
enum class PhaseTiming { kEvents, kSync, kNone };

// The flags' names of each set; parse() throws common::UsageError naming the flag and the valid names.
const common::NamedValues<DatasetKind>& datasetNames();      // cifar10 fashion-mnist synthetic
const common::NamedValues<DeviceKind>& deviceNames();        // cpu cuda
const common::NamedValues<OptimizerKind>& optimizerNames();  // sgd adam rmsprop
const common::NamedValues<Amp>& ampNames();                  // off bf16 fp16
const common::NamedValues<Sync>& syncNames();                // ssgd pairavg
const common::NamedValues<ParallelMode>& modeNames();        // ddp dp
const common::NamedValues<PhaseTiming>& phaseTimingNames();  // events sync none
const common::NamedValues<bool>& cudnnBenchmarkNames();      // on off

}  // namespace dtbench::run
