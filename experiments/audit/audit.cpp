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
//
// An epoch that segments of different worlds trained (a resume at another world size): each segment but
// the last trained whole batches from where the one before stopped, steps f .. f' - 1 (f, f' the first
// steps of it and of the next), positions P .. P + (f' - f) * B * N - 1 of the list, a prefix; the last
// one deals the rest, positions P .. n - 1, as the sampler deals a whole epoch (its `start` P), for the
// epoch's remaining steps.
struct ExpectedEpoch {
  std::vector<int32_t> counts;  // by dataset index
  int64_t positions = 0;        // samples the epoch trains, over every rank
  bool cutBySteps = false;      // --max-steps: fewer steps than a whole epoch's
};

// One segment's share of an epoch: its plan and the epoch's step it took first.
struct SegmentPart {
  EpochPlan plan;
  int64_t firstStep = 1;
};

ExpectedEpoch expectedCounts(const std::vector<SegmentPart>& parts, int64_t epoch) {
  const EpochPlan& last = parts.back().plan;
  const int64_t n = last.datasetSize;
  ExpectedEpoch out;
  const std::vector<int64_t> order = data::epochPermutation(last.seed, epoch, n);
  out.counts.assign(static_cast<size_t>(n), 0);
  const auto train = [&](int64_t from, int64_t count) {
    for (int64_t position = from; position < from + count; ++position)
      ++out.counts[static_cast<size_t>(order[static_cast<size_t>(position % n)])];
    out.positions += count;
  };
  int64_t start = 0;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const EpochPlan& p = parts[i].plan;
    const int64_t positions = (parts[i + 1].firstStep - parts[i].firstStep) * p.batchSize * p.worldSize;
    train(start, positions);
    start += positions;
  }
  const int64_t world = last.worldSize;
  const int64_t rest = std::max<int64_t>(0, n - start);
  const int64_t share = last.dropLast ? rest / world : (rest + world - 1) / world;
  // A whole epoch's steps: drop-last also drops each rank's last, incomplete batch.
  const int64_t fullSteps = last.dropLast ? share / last.batchSize : (share + last.batchSize - 1) / last.batchSize;
  const int64_t steps = last.epochSteps - (parts.back().firstStep - 1);
  out.cutBySteps = steps < fullSteps;
  train(start, std::min(share, std::max<int64_t>(0, steps) * last.batchSize) * world);
  return out;
}

ExpectedEpoch expectedCounts(const EpochPlan& p, int64_t epoch) { return expectedCounts({{p, 1}}, epoch); }

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
    // One plan per segment of the epoch: its facts, and one world, or the expectation below would be
    // another epoch's. The epoch's data order (dataset, drop-last, seed) is every segment's.
    const EpochPlan first = planOfRow(*rows.front());
    std::set<int64_t> ranks;
    std::map<int64_t, SegmentPart> parts;  // by segment
    std::map<int64_t, std::map<int64_t, std::set<int64_t>>> stepsOf;  // segment -> rank -> steps
    for (const run::LedgerRow* r : rows) {
      ranks.insert(r->rank);
      stepsOf[r->segment][r->rank].insert(r->step);
      const EpochPlan own = planOfRow(*r);
      if (own.datasetSize != first.datasetSize || own.dropLast != first.dropLast || own.seed != first.seed)
        throw std::runtime_error("epoch " + std::to_string(epoch) + ": " + ledgerFileOf(r->rank) + " (global step " +
                                 std::to_string(r->globalStep) + ") has " + describePlan(own) + ", " +
                                 ledgerFileOf(rows.front()->rank) + " " + describePlan(first) +
                                 ": the rows of one epoch must share its data order");
      const auto [at, added] = parts.emplace(r->segment, SegmentPart{own, r->step});
      if (!added) {
        if (own.key() != at->second.plan.key()) audit.coverageChecked = false;
        at->second.firstStep = std::min(at->second.firstStep, r->step);
      }
    }
    audit.ranks = static_cast<int64_t>(ranks.size());
    audit.segments = static_cast<int64_t>(parts.size());
    if (!audit.coverageChecked)
      audit.notes.push_back("the rows of one segment disagree on its world (world size, batch size or steps per "
                            "epoch): checked for duplicates only");
    std::vector<SegmentPart> ordered;
    for (const auto& [segment, part] : parts) ordered.push_back(part);
    ordered.front().firstStep = 1;  // the epoch's first steps are its first segment's, rows or not
    const EpochPlan& plan = ordered.back().plan;  // where the epoch ends
    if (ordered.size() > 1) {
      std::string worlds;
      for (const SegmentPart& part : ordered)
        worlds += (worlds.empty() ? "" : ", then ") + std::to_string(part.plan.worldSize) + " ranks x " +
                  std::to_string(part.plan.batchSize) + " from step " + std::to_string(part.firstStep);
      audit.notes.push_back("trained by " + std::to_string(ordered.size()) + " segments: " + worlds +
                            " (each continues the epoch's permutation where the one before stopped)");
    }

    // Finished: every rank of each segment's world has every step of the segment's part of the epoch.
    // Unfinished, the run's last epoch is partial only where the earlier segments are whole and every rank
    // of the last has the same steps: the ranks stop after the same step, and their rows reach the ledger
    // together, so a rank with fewer steps than the others lost rows.
    bool finished = true;
    bool sameSteps = true;
    bool earlierWhole = true;
    int64_t rankSteps = 0, plannedRankSteps = 0;
    size_t index = 0;
    for (const auto& [segment, part] : parts) {
      const bool lastPart = index + 1 == ordered.size();
      const int64_t from = ordered[index].firstStep;
      const int64_t to = lastPart ? part.plan.epochSteps : ordered[index + 1].firstStep - 1;
      const int64_t want = std::max<int64_t>(0, to - from + 1);
      std::map<int64_t, std::set<int64_t>>& steps = stepsOf[segment];
      for (int64_t rank = 0; rank < part.plan.worldSize; ++rank) {
        const auto have = static_cast<int64_t>(steps[rank].size());
        rankSteps += have;
        plannedRankSteps += want;
        if (have < want) {
          finished = false;
          if (!lastPart) earlierWhole = false;
        }
        if (lastPart) sameSteps = sameSteps && steps[rank] == steps[0];
      }
      ++index;
    }
    audit.partial = !finished && epoch == lastEpoch && sameSteps && earlierWhole;
    if (!finished && !audit.partial) {
      index = 0;
      for (const auto& [segment, part] : parts) {
        const bool lastPart = index + 1 == ordered.size();
        const int64_t want = std::max<int64_t>(
            0, (lastPart ? part.plan.epochSteps : ordered[index + 1].firstStep - 1) - ordered[index].firstStep + 1);
        for (int64_t rank = 0; rank < part.plan.worldSize; ++rank)
          if (static_cast<int64_t>(stepsOf[segment][rank].size()) < want)
            audit.notes.push_back("rank " + std::to_string(rank) +
                                  (parts.size() > 1 ? " of segment " + std::to_string(segment) : std::string()) +
                                  " has " + std::to_string(stepsOf[segment][rank].size()) + " of its " +
                                  std::to_string(want) + " steps");
        ++index;
      }
    }
    if (audit.partial)
      audit.notes.push_back("the run's last epoch, unfinished (" + std::to_string(rankSteps) + " of " +
                            std::to_string(plannedRankSteps) + " rank steps): checked for duplicates only");

    ExpectedEpoch design = expectedCounts(ordered, epoch);
    std::vector<int32_t>& expected = design.counts;
    audit.expected = design.positions;
    for (int32_t e : expected) {
      audit.dropped += e == 0 ? 1 : 0;
      audit.padded += e > 1 ? e - 1 : 0;
    }
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
