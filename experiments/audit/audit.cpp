#include "experiments/audit/audit.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "common/usage_error.h"
#include "data/sampler.h"

namespace dtbench::audit {
namespace {

namespace fs = std::filesystem;

// What an epoch's expectation derives from; every row of the epoch must agree on it (one world).
struct EpochPlan {
  int64_t datasetSize = 0;
  int64_t worldSize = 0;
  int64_t batchSize = 0;
  int64_t epochSteps = 0;
  bool dropLast = false;
  uint64_t seed = 0;

  auto key() const { return std::tie(datasetSize, worldSize, batchSize, epochSteps, dropLast, seed); }
};

EpochPlan planOfRow(const run::LedgerRow& r) {
  return {r.datasetSize, r.worldSize, r.batchSize, r.epochSteps, r.dropLast, r.seed};
}

std::string describePlan(const EpochPlan& p) {
  return "dataset_size " + std::to_string(p.datasetSize) + ", world_size " + std::to_string(p.worldSize) +
         ", batch_size " + std::to_string(p.batchSize) + ", epoch_steps " + std::to_string(p.epochSteps) +
         ", drop_last " + std::to_string(p.dropLast ? 1 : 0) + ", seed " + std::to_string(p.seed);
}

// How often the epoch trains each dataset index by design (data/sampler.h's contract): rank r's k-th
// sample is position r + k*N of the permutation, padded by wrapping around without drop-last and cut to
// a whole number of samples per rank with it; each rank takes min(its share, steps * batch) of them, so
// the epoch trains positions 0 .. that * N - 1.
struct ExpectedEpoch {
  std::vector<int32_t> counts;  // by dataset index
  int64_t positions = 0;        // samples the epoch trains, over every rank
  bool cutBySteps = false;      // --max-steps: fewer steps than a whole epoch's
};

ExpectedEpoch expectedCounts(const EpochPlan& p, int64_t epoch) {
  const int64_t n = p.datasetSize;
  const int64_t world = p.worldSize;
  const int64_t share = p.dropLast ? n / world : (n + world - 1) / world;
  ExpectedEpoch out;
  // A whole epoch's steps: drop-last also drops each rank's last, incomplete batch.
  const int64_t fullSteps = p.dropLast ? share / p.batchSize : (share + p.batchSize - 1) / p.batchSize;
  out.cutBySteps = p.epochSteps < fullSteps;
  out.positions = std::min(share, p.epochSteps * p.batchSize) * world;
  const std::vector<int64_t> order = data::epochPermutation(p.seed, epoch, n);
  out.counts.assign(static_cast<size_t>(n), 0);
  for (int64_t position = 0; position < out.positions; ++position)
    ++out.counts[static_cast<size_t>(order[static_cast<size_t>(position % n)])];
  return out;
}

std::string ledgerFileOf(int64_t rank) { return run::sampleLedgerFileName(rank); }

// "1 index", "4 indices".
std::string countOf(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

AuditResult auditLedgers(const std::map<int64_t, std::vector<run::LedgerRow>>& ledgers, size_t shown) {
  AuditResult result;
  result.ranks = static_cast<int64_t>(ledgers.size());
  // Every rank of every recorded world has a ledger; one segment is one world.
  std::map<int64_t, std::pair<int64_t, int64_t>> worldOfSegment;  // segment -> (world size, rank that says so)
  std::map<int64_t, std::vector<const run::LedgerRow*>> rowsOfEpoch;
  for (const auto& [rank, rows] : ledgers)
    for (const run::LedgerRow& r : rows) {
      ++result.rows;
      const auto [at, added] = worldOfSegment.emplace(r.segment, std::pair{r.worldSize, rank});
      if (!added && at->second.first != r.worldSize)
        throw std::runtime_error("segment " + std::to_string(r.segment) + " has world size " +
                                 std::to_string(at->second.first) + " in " + ledgerFileOf(at->second.second) +
                                 " but " + std::to_string(r.worldSize) + " in " + ledgerFileOf(rank) +
                                 " (global step " + std::to_string(r.globalStep) + "): the ledger was changed");
      rowsOfEpoch[r.epoch].push_back(&r);
    }
  for (const auto& [segment, world] : worldOfSegment)
    for (int64_t rank = 0; rank < world.first; ++rank)
      if (!ledgers.count(rank))
        throw std::runtime_error("the ledger of rank " + std::to_string(rank) + " (" + ledgerFileOf(rank) +
                                 ") is missing: segment " + std::to_string(segment) + " ran " +
                                 std::to_string(world.first) + " ranks (" + ledgerFileOf(world.second) +
                                 " says so); without it no epoch can be checked");
  if (rowsOfEpoch.empty()) return result;

  const int64_t lastEpoch = rowsOfEpoch.rbegin()->first;
  const EpochPlan firstPlan = planOfRow(*rowsOfEpoch.begin()->second.front());
  for (int64_t epoch = 1; epoch <= lastEpoch; ++epoch) {
    EpochAudit audit;
    audit.epoch = epoch;
    const auto found = rowsOfEpoch.find(epoch);
    if (found == rowsOfEpoch.end()) {
      // No rank wrote a row of this epoch: every sample of it is missing.
      const int64_t positions = expectedCounts(firstPlan, epoch).positions;
      audit.expected = positions;
      audit.missing = positions;
      audit.notes.push_back("no rank has a row of epoch " + std::to_string(epoch));
      result.totalMissing += positions;
      result.epochs.push_back(std::move(audit));
      continue;
    }
    const std::vector<const run::LedgerRow*>& rows = found->second;
    // One plan per epoch: its facts, and one world, or the expectation below would be another epoch's.
    const EpochPlan plan = planOfRow(*rows.front());
    std::set<int64_t> ranks, segments;
    std::map<int64_t, std::set<int64_t>> stepsOfRank;
    for (const run::LedgerRow* r : rows) {
      ranks.insert(r->rank);
      segments.insert(r->segment);
      stepsOfRank[r->rank].insert(r->step);
      const EpochPlan own = planOfRow(*r);
      if (own.datasetSize != plan.datasetSize || own.dropLast != plan.dropLast || own.seed != plan.seed)
        throw std::runtime_error("epoch " + std::to_string(epoch) + ": " + ledgerFileOf(r->rank) + " (global step " +
                                 std::to_string(r->globalStep) + ") has " + describePlan(own) + ", " +
                                 ledgerFileOf(rows.front()->rank) + " " + describePlan(plan) +
                                 ": the rows of one epoch must share its data order");
      if (own.key() != plan.key()) audit.coverageChecked = false;
    }
    audit.ranks = static_cast<int64_t>(ranks.size());
    audit.segments = static_cast<int64_t>(segments.size());
    if (!audit.coverageChecked)
      audit.notes.push_back("its segments ran different worlds (world size, batch size or steps per epoch): "
                            "checked for duplicates only");

    // Finished: every rank of the world has every step of the epoch. Unfinished, the run's last epoch is
    // partial only where every rank has the same steps: the ranks stop after the same step, and their rows
    // reach the ledger together, so a rank with fewer steps than the others lost rows.
    bool finished = true;
    bool sameSteps = true;
    for (int64_t rank = 0; rank < plan.worldSize; ++rank) {
      finished = finished && static_cast<int64_t>(stepsOfRank[rank].size()) >= plan.epochSteps;
      sameSteps = sameSteps && stepsOfRank[rank] == stepsOfRank[0];
    }
    audit.partial = !finished && epoch == lastEpoch && sameSteps;
    if (!finished && !audit.partial)
      for (int64_t rank = 0; rank < plan.worldSize; ++rank)
        if (static_cast<int64_t>(stepsOfRank[rank].size()) < plan.epochSteps)
          audit.notes.push_back("rank " + std::to_string(rank) + " has " + std::to_string(stepsOfRank[rank].size()) +
                                " of its " + std::to_string(plan.epochSteps) + " steps");
    if (audit.partial)
      audit.notes.push_back("the run's last epoch, unfinished (" + std::to_string(rows.size()) + " of " +
                            std::to_string(plan.epochSteps * plan.worldSize) +
                            " rank steps): checked for duplicates only");

    ExpectedEpoch design = expectedCounts(plan, epoch);
    std::vector<int32_t>& expected = design.counts;
    audit.expected = design.positions;
    for (int32_t e : expected) audit.dropped += e == 0 ? 1 : 0;
    audit.padded = std::max<int64_t>(0, design.positions - plan.datasetSize);
    if (audit.dropped > 0)
      audit.notes.push_back(countOf(audit.dropped, "index", "indices") + " left out by design (" +
                            (design.cutBySteps ? "--max-steps " + std::to_string(plan.epochSteps) : "drop-last") +
                            "): the last ones of the epoch's permutation");
    if (audit.padded > 0)
      audit.notes.push_back(countOf(audit.padded, "sample", "samples") + " repeated by design (no drop-last: the " +
                            "permutation's first ones pad every rank's share to the same size)");
    if (!audit.coverageChecked)
      for (int32_t& e : expected) e = std::max<int32_t>(e, 1);  // any index once; more is a duplicate

    std::vector<int32_t> seen(expected.size(), 0);
    for (const run::LedgerRow* r : rows) {
      audit.seen += static_cast<int64_t>(r->indices.size());
      for (int64_t i : r->indices) {
        if (i < 0 || i >= plan.datasetSize)
          throw std::runtime_error(ledgerFileOf(r->rank) + " global step " + std::to_string(r->globalStep) +
                                   ": index " + std::to_string(i) + " is beyond the dataset's " +
                                   std::to_string(plan.datasetSize) + " samples");
        ++seen[static_cast<size_t>(i)];
      }
    }
    std::vector<size_t> duplicated;  // indices to name, up to `shown` over the whole run
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i] > expected[i]) {
        audit.duplicates += seen[i] - expected[i];
        if (result.duplicates.size() + duplicated.size() < shown) duplicated.push_back(i);
      } else if (seen[i] < expected[i] && !audit.partial && audit.coverageChecked) {
        audit.missing += expected[i] - seen[i];
        if (result.missing.size() < shown)
          result.missing.push_back({epoch, static_cast<int64_t>(i), expected[i], seen[i], {}});
      }
    }
    // Where each named duplicate was seen, in the order the ranks trained them.
    for (size_t i : duplicated) {
      IndexFinding finding{epoch, static_cast<int64_t>(i), expected[i], seen[i], {}};
      for (const run::LedgerRow* r : rows)
        for (int64_t index : r->indices)
          if (index == static_cast<int64_t>(i)) finding.seenAt.push_back({r->rank, r->segment, r->step, r->globalStep});
      std::sort(finding.seenAt.begin(), finding.seenAt.end(), [](const Occurrence& a, const Occurrence& b) {
        return std::tie(a.globalStep, a.rank) < std::tie(b.globalStep, b.rank);
      });
      result.duplicates.push_back(std::move(finding));
    }
    result.totalDuplicates += audit.duplicates;
    result.totalMissing += audit.missing;
    result.epochs.push_back(std::move(audit));
  }
  return result;
}

AuditResult auditRunDirectory(const std::string& directory, size_t shown) {
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw common::UsageError(directory + " is not a run directory (no such directory)");
  const std::map<int64_t, std::string> files = run::findSampleLedgers(directory);
  if (files.empty())
    throw common::UsageError(directory + " holds no sample ledger (sample_ledger.rank<R>.csv): the run was trained "
                             "without it; rerun it with dtbench train --sample-ledger");
  std::map<int64_t, std::vector<run::LedgerRow>> ledgers;
  for (const auto& [rank, path] : files) ledgers[rank] = run::readSampleLedger(path, rank);
  try {
    return auditLedgers(ledgers, shown);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(directory + ": " + e.what());
  }
}

namespace {

std::string describeOccurrence(const Occurrence& o) {
  std::string text = "rank " + std::to_string(o.rank) + " step " + std::to_string(o.step) + " (global step " +
                     std::to_string(o.globalStep);
  if (o.segment != 0) text += ", segment " + std::to_string(o.segment);
  return text + ")";
}

// The table's columns, right-aligned under their headers.
std::string auditTableText(const AuditResult& result) {
  const std::vector<std::string> header{"epoch",   "expected", "seen",  "duplicates", "missing", "dropped",
                                        "padded",  "ranks",    "segments", "status"};
  std::vector<std::vector<std::string>> lines{header};
  for (const EpochAudit& e : result.epochs) {
    std::string status = "ok";
    if (e.duplicates > 0 && e.missing > 0)
      status = "DUPLICATES, MISSING";
    else if (e.duplicates > 0)
      status = "DUPLICATES";
    else if (e.missing > 0)
      status = "MISSING";
    else if (e.partial)
      status = "partial";
    else if (!e.coverageChecked)
      status = "duplicates only";
    lines.push_back({std::to_string(e.epoch), std::to_string(e.expected), std::to_string(e.seen),
                     std::to_string(e.duplicates), e.partial || !e.coverageChecked ? "-" : std::to_string(e.missing),
                     std::to_string(e.dropped), std::to_string(e.padded), std::to_string(e.ranks),
                     std::to_string(e.segments), status});
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& line : lines)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  std::string text;
  for (const auto& line : lines) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      const bool last = c + 1 == line.size();
      const std::string pad(width[c] - line[c].size(), ' ');
      out += last ? line[c] : pad + line[c] + "  ";  // the status, text, left-aligned
    }
    text += out + "\n";
  }
  return text;
}

}  // namespace

std::string renderAudit(const AuditResult& result, const std::string& directory) {
  std::string text = "Sample ledger of " + directory + ": " + std::to_string(result.rows) + " rows from " +
                     std::to_string(result.ranks) + " rank" + (result.ranks == 1 ? "" : "s") + "\n\n";
  text += auditTableText(result);
  std::string notes;
  for (const EpochAudit& e : result.epochs)
    for (const std::string& note : e.notes) notes += "- epoch " + std::to_string(e.epoch) + ": " + note + "\n";
  if (!notes.empty()) text += "\n" + notes;
  if (!result.duplicates.empty()) {
    text += "\nDuplicates (the first " + std::to_string(result.duplicates.size()) + " of " +
            std::to_string(result.totalDuplicates) + "):\n";
    for (const IndexFinding& f : result.duplicates) {
      text += "- epoch " + std::to_string(f.epoch) + " index " + std::to_string(f.index) + ": seen " +
              std::to_string(f.seenCount) + " times, expected " + std::to_string(f.expectedCount) +
              (f.expectedCount == 0 ? " (left out by design)" : "") + ": ";
      for (size_t k = 0; k < f.seenAt.size(); ++k) text += (k ? ", " : "") + describeOccurrence(f.seenAt[k]);
      text += "\n";
    }
  }
  if (!result.missing.empty()) {
    text += "\nMissing (the first " + std::to_string(result.missing.size()) + " of " +
            std::to_string(result.totalMissing) + "):\n";
    for (const IndexFinding& f : result.missing)
      text += "- epoch " + std::to_string(f.epoch) + " index " + std::to_string(f.index) + ": seen " +
              std::to_string(f.seenCount) + " times, expected " + std::to_string(f.expectedCount) + "\n";
  } else if (result.totalMissing > 0) {
    text += "\nMissing: " + std::to_string(result.totalMissing) + " samples (epochs without rows)\n";
  }
  const bool partial = std::any_of(result.epochs.begin(), result.epochs.end(), [](const EpochAudit& e) { return e.partial; });
  if (result.epochs.empty())
    text += "\nnothing to check: the ledger holds no rows yet (its rows are written at every epoch end and "
            "checkpoint)\n";
  else if (!result.clean())
    text += "\nNOT clean: " + std::to_string(result.totalDuplicates) + " duplicate and " +
            std::to_string(result.totalMissing) + " missing samples\n";
  else if (partial)
    text += "\nclean: every finished epoch trained each sample as often as its data order says, and the unfinished "
            "last one no sample more often\n";
  else
    text += "\nclean: every epoch trained each sample as often as its data order says\n";
  return text;
}

}  // namespace dtbench::audit
