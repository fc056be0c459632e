#pragma once
// `dtbench audit RUNDIR` (docs/audit.md): checks a run's sample ledger (run/sample_ledger.h) epoch by
// epoch, over every rank and segment: every dataset index of the training set trained exactly as often
// as the epoch's data order says, which is once, except
//   - the indices the epoch leaves out by design: with drop-last, the ones the epoch's permutation puts
//     last (what no rank's whole batches take), and under --max-steps the ones after the cut;
//   - the indices it repeats by design: without drop-last, the first ones of the permutation, which pad
//     the epoch to a whole number of samples per rank (torch's DistributedSampler's wrap-around).
// The expectation is derived here from the ledger rows' facts (dataset size, world size, per-rank batch,
// steps per epoch, drop-last, seed) and data::epochPermutation alone, after the documented contract of
// data/sampler.h, and the ledger holds the indices the loader actually gathered: a sampler that repeats,
// skips or swaps a sample is caught, and a by-design drop is told apart from a missing sample.
// The run's last epoch, when unfinished (a stopped run), is checked for duplicates only and reported as
// partial.
// An epoch split between segments by a --resume at another world size is checked in full: each segment
// trained whole batches from the prefix the one before consumed (its first step tells how many), and the
// last one dealt the rest of the permutation to its world (data/sampler.h's `start`).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "run/sample_ledger.h"

namespace dtbench::audit {

// One epoch checked.
struct EpochAudit {
  int64_t epoch = 0;
  int64_t expected = 0;    // samples the epoch trains by design: its share of the (padded) permutation
  int64_t seen = 0;        // samples the ledger's rows of the epoch hold
  int64_t duplicates = 0;  // occurrences beyond what an index is expected to have
  int64_t missing = 0;     // expected occurrences not seen (not counted in a partial epoch)
  int64_t dropped = 0;     // indices the epoch leaves out by design (drop-last, --max-steps)
  int64_t padded = 0;      // occurrences the epoch repeats by design (the padding without drop-last)
  int64_t ranks = 0;       // ranks with rows of the epoch
  int64_t segments = 0;    // segments with rows of the epoch
  bool partial = false;    // the run's last epoch, unfinished: duplicates only
  bool coverageChecked = true;  // false: only duplicates could be checked (see notes)
  std::vector<std::string> notes;  // why an epoch is partial, which steps a rank lacks, ...
};

// Where an index was seen.
struct Occurrence {
  int64_t rank = 0;
  int64_t segment = 0;
  int64_t step = 0;
  int64_t globalStep = 0;
};

// An index seen more, or less, often than expected.
struct IndexFinding {
  int64_t epoch = 0;
  int64_t index = 0;
  int64_t expectedCount = 0;
  int64_t seenCount = 0;
  std::vector<Occurrence> seenAt;  // duplicates: every occurrence
};

struct AuditResult {
  std::vector<EpochAudit> epochs;  // in epoch order, every epoch from 1 to the ledger's last
  int64_t rows = 0;
  int64_t ranks = 0;  // ledger files read
  std::vector<IndexFinding> duplicates;  // the first `shown`, by epoch and index
  std::vector<IndexFinding> missing;     // the first `shown`, by epoch and index
  int64_t totalDuplicates = 0;
  int64_t totalMissing = 0;

  bool clean() const { return totalDuplicates == 0 && totalMissing == 0; }
};

// Audits the rows of every rank's ledger, by rank (a rank's rows from its own file). Throws
// std::runtime_error when a rank of a recorded world size has no ledger, naming it, or when the rows of
// one epoch disagree on its facts (dataset size, drop-last, seed) or one segment on its world. `shown`:
// how many duplicate and missing indices to name.
AuditResult auditLedgers(const std::map<int64_t, std::vector<run::LedgerRow>>& ledgers, size_t shown);

// Reads every sample_ledger.rank<R>.csv in `directory` and audits them. common::UsageError when
// `directory` is not a directory or holds no ledger (run without --sample-ledger); std::runtime_error
// naming the file for one that does not read, and as auditLedgers.
AuditResult auditRunDirectory(const std::string& directory, size_t shown);

// The per-epoch table, the notes, the named duplicates and missing indices, and the verdict.
std::string renderAudit(const AuditResult& result, const std::string& directory);

}  // namespace dtbench::audit
