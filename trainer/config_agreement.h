#pragma once
// The settings every rank of a run must share, and the checks that they are shared
// (docs/design.md, "Correctness guards"): the rows of run/config_schema.h whose agreement is not per
// rank, read both by the check across ranks, once after the world forms and before anything else
// communicates, and by --resume's check against the run it continues (run::describeResumeChanges, from
// trainer/checkpoint/checkpointer.cpp).
//
// A rank that trained with another learning rate, seed or batch size would finish "completed" with
// silently different parameters; one with another model, step count, topology or checkpoint period
// would issue other collectives than its peers and wait out --timeout, or abort. Comparing the
// settings up front turns all of these into one usage error (exit 2) on every rank that names each
// differing flag and the ranks holding each value.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "trainer/config.h"

namespace dtbench::trainer {

struct SharedSetting {
  const char* key;         // as in config.json (trainer/record/config_json.h), e.g. "batch_size"
  const char* flag;        // the command-line flag that sets it, e.g. "--batch-size"
  bool unchangedOnResume;  // --resume also refuses a value other than the run's
};

// Every setting that affects the result or the sequence of collective operations, in the schema's
// order, which messages follow. Every rank must agree on all of them.
const std::vector<SharedSetting>& sharedSettings();

// `config`'s shared settings as one JSON object, keyed like config.json.
nlohmann::json sharedSettingsJson(const RunConfig& config);

// Pure: every rank's sharedSettingsJson, rank by rank. "" when all agree; otherwise one message
// naming each differing flag and the ranks with each value, e.g. "the ranks disagree on --lr
// (rank 0: 0.1; rank 1: 0.5); every rank must run with the same flags". A key missing on a rank
// counts as a value of its own ("absent").
std::string describeDisagreement(const std::vector<nlohmann::json>& ranks);

// Collective (one exchange of every rank's settings): throws common::UsageError with
// describeDisagreement's message, on every rank alike, when the ranks disagree. The exchange also
// carries the slowest link rate each rank read from the emulated cluster's cluster.json
// (trainer/world.h), which sets the pipeline segment across hosts: ranks that read different rates
// (another DTBENCH_CLUSTER) would cut the same tensor differently, so that is refused too.
void checkRanksAgree(comm::Communicator& communicator, const RunConfig& config,
                     std::optional<double> slowestLinkBps = std::nullopt);

}  // namespace dtbench::trainer
