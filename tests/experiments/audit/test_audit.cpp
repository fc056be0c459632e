#include <catch2/catch.hpp>
#include "experiments/audit/audit.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/usage_error.h"
#include "data/sampler.h"
#include "run/sample_ledger.h"
#include "temp_dir.h"

namespace audit = dtbench::audit;
namespace run = dtbench::run;

using dtbench::testing::TempDir;

namespace {

using Ledgers = std::map<int64_t, std::vector<run::LedgerRow>>;

// What a run of `epochs` epochs would write, built from DistributedSampler (as the loader batches it):
// the ledgers of a correct data order.
struct AuditedRun {
  int64_t datasetSize = 100;
  int64_t worldSize = 3;
  int64_t batchSize = 8;
  bool dropLast = true;
  int64_t maxSteps = 0;
  uint64_t seed = 7;
  int64_t epochs = 1;

  int64_t stepsPerEpoch() const {
    const int64_t share = dropLast ? datasetSize / worldSize : (datasetSize + worldSize - 1) / worldSize;
    const int64_t full = dropLast ? share / batchSize : (share + batchSize - 1) / batchSize;
    return maxSteps > 0 ? std::min(maxSteps, full) : full;
  }

  Ledgers ledgers() const {
    Ledgers out;
    const int64_t steps = stepsPerEpoch();
    for (int64_t rank = 0; rank < worldSize; ++rank) {
      const dtbench::data::DistributedSampler sampler(datasetSize, rank, worldSize, seed, true, dropLast);
      for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
        const std::vector<int64_t> mine = sampler.indices(epoch);
        for (int64_t step = 1; step <= steps; ++step) {
          run::LedgerRow r;
          r.worldSize = worldSize;
          r.rank = rank;
          r.epoch = epoch;
          r.step = step;
          r.globalStep = (epoch - 1) * steps + step;
          r.datasetSize = datasetSize;
          r.batchSize = batchSize;
          r.epochSteps = steps;
          r.dropLast = dropLast;
          r.seed = seed;
          const auto begin = mine.begin() + (step - 1) * batchSize;
          const auto end = mine.begin() + std::min<int64_t>(step * batchSize, static_cast<int64_t>(mine.size()));
          r.indices.assign(begin, end);
          std::sort(r.indices.begin(), r.indices.end());
          out[rank].push_back(r);
        }
      }
    }
    return out;
  }
};

const audit::EpochAudit& auditedEpoch(const audit::AuditResult& result, int64_t epoch) {
  REQUIRE(static_cast<int64_t>(result.epochs.size()) >= epoch);
  return result.epochs[static_cast<size_t>(epoch - 1)];
}

}  // namespace

TEST_CASE("a correct data order with drop-last audits clean, its dropped samples by design", "[audit]") {
  const AuditedRun setup;  // 100 samples, 3 ranks of 33, 4 whole batches of 8: 96 trained, 4 dropped
  const audit::AuditResult result = audit::auditLedgers(setup.ledgers(), 10);
  CHECK(result.clean());
  REQUIRE(result.epochs.size() == 1);
  const audit::EpochAudit& e = result.epochs.front();
  CHECK(e.expected == 96);
  CHECK(e.seen == 96);
  CHECK(e.duplicates == 0);
  CHECK(e.missing == 0);
  CHECK(e.dropped == 4);
  CHECK(e.padded == 0);
  CHECK(e.ranks == 3);
  CHECK(e.segments == 1);
  CHECK_FALSE(e.partial);
  CHECK_THAT(audit::renderAudit(result, "RUN"), Catch::Contains("clean") && Catch::Contains("drop-last"));
}

TEST_CASE("without drop-last the padding's repeats are by design", "[audit]") {
  AuditedRun setup;
  setup.dropLast = false;  // shares of 34: 102 positions, the permutation's first 2 twice
  setup.epochs = 2;
  const audit::AuditResult result = audit::auditLedgers(setup.ledgers(), 10);
  CHECK(result.clean());
  for (int64_t epoch : {1, 2}) {
    const audit::EpochAudit& e = auditedEpoch(result, epoch);
    CHECK(e.expected == 102);
    CHECK(e.seen == 102);
    CHECK(e.padded == 2);
    CHECK(e.dropped == 0);
  }
}

TEST_CASE("a cut by max-steps leaves the rest of the epoch out by design", "[audit]") {
  AuditedRun setup;
  setup.maxSteps = 2;  // 3 ranks x 2 steps x 8
  const audit::AuditResult result = audit::auditLedgers(setup.ledgers(), 10);
  CHECK(result.clean());
  CHECK(result.epochs.front().expected == 48);
  CHECK(result.epochs.front().dropped == 52);
  CHECK_THAT(audit::renderAudit(result, "RUN"), Catch::Contains("--max-steps 2"));
}

TEST_CASE("a sample trained twice is a duplicate named with its ranks and steps", "[audit]") {
  const AuditedRun setup;
  Ledgers ledgers = setup.ledgers();
  // Rank 2's third batch takes rank 0's first sample of step 1 in place of one of its own.
  const int64_t twice = ledgers[0][0].indices.front();
  const int64_t lost = ledgers[2][2].indices.back();
  ledgers[2][2].indices.back() = twice;
  std::sort(ledgers[2][2].indices.begin(), ledgers[2][2].indices.end());
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK_FALSE(result.clean());
  CHECK(result.totalDuplicates == 1);
  CHECK(result.totalMissing == 1);
  REQUIRE(result.duplicates.size() == 1);
  const audit::IndexFinding& d = result.duplicates.front();
  CHECK(d.index == twice);
  CHECK(d.seenCount == 2);
  CHECK(d.expectedCount == 1);
  REQUIRE(d.seenAt.size() == 2);
  CHECK(d.seenAt[0].rank == 0);
  CHECK(d.seenAt[0].step == 1);
  CHECK(d.seenAt[1].rank == 2);
  CHECK(d.seenAt[1].step == 3);
  REQUIRE(result.missing.size() == 1);
  CHECK(result.missing.front().index == lost);
  const std::string text = audit::renderAudit(result, "RUN");
  CHECK_THAT(text, Catch::Contains("index " + std::to_string(twice) + ": seen 2 times, expected 1: rank 0 step 1") &&
                       Catch::Contains("rank 2 step 3") && Catch::Contains("NOT clean"));
}

TEST_CASE("a sample no rank trained is missing", "[audit]") {
  const AuditedRun setup;
  Ledgers ledgers = setup.ledgers();
  const int64_t lost = ledgers[1][3].indices[4];
  ledgers[1][3].indices.erase(ledgers[1][3].indices.begin() + 4);
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK(result.totalDuplicates == 0);
  CHECK(result.totalMissing == 1);
  CHECK(result.epochs.front().seen == 95);
  REQUIRE(result.missing.size() == 1);
  CHECK(result.missing.front().index == lost);
  CHECK(result.missing.front().epoch == 1);
}

TEST_CASE("drop-last must leave out the permutation's last samples, not others", "[audit]") {
  const AuditedRun setup;
  Ledgers ledgers = setup.ledgers();
  // A sampler that dropped one of the epoch's trained samples and trained one drop-last leaves out instead.
  const std::vector<int64_t> order = dtbench::data::epochPermutation(setup.seed, 1, setup.datasetSize);
  const int64_t droppedByDesign = order.back();
  const int64_t trained = ledgers[0][0].indices.front();
  ledgers[0][0].indices.front() = droppedByDesign;
  std::sort(ledgers[0][0].indices.begin(), ledgers[0][0].indices.end());
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK(result.totalDuplicates == 1);
  CHECK(result.totalMissing == 1);
  REQUIRE(result.duplicates.size() == 1);
  CHECK(result.duplicates.front().index == droppedByDesign);
  CHECK(result.duplicates.front().expectedCount == 0);
  REQUIRE(result.missing.size() == 1);
  CHECK(result.missing.front().index == trained);
  CHECK_THAT(audit::renderAudit(result, "RUN"), Catch::Contains("left out by design"));
}

TEST_CASE("the run's unfinished last epoch is partial and checked for duplicates only", "[audit]") {
  AuditedRun setup;
  setup.epochs = 2;
  Ledgers ledgers = setup.ledgers();
  for (auto& [rank, rows] : ledgers) rows.resize(rows.size() - 2);  // stopped after epoch 2's step 2
  audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK(result.clean());
  REQUIRE(result.epochs.size() == 2);
  CHECK_FALSE(result.epochs[0].partial);
  CHECK(result.epochs[1].partial);
  CHECK(result.epochs[1].seen == 3 * 2 * 8);
  CHECK(result.epochs[1].missing == 0);
  CHECK_THAT(audit::renderAudit(result, "RUN"), Catch::Contains("partial"));

  // A duplicate in it is still one.
  ledgers[1].back().indices.front() = ledgers[0].back().indices.front();
  std::sort(ledgers[1].back().indices.begin(), ledgers[1].back().indices.end());
  result = audit::auditLedgers(ledgers, 10);
  CHECK(result.totalDuplicates == 1);
  CHECK(result.totalMissing == 0);
}

TEST_CASE("a last epoch where one rank lost rows is not partial: its samples are missing", "[audit]") {
  AuditedRun setup;
  setup.epochs = 1;
  Ledgers ledgers = setup.ledgers();
  ledgers[1].resize(1);  // rank 1 keeps its first step of 4, the others have all
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK_FALSE(result.epochs.front().partial);
  CHECK(result.totalMissing == 3 * 8);
  CHECK_THAT(audit::renderAudit(result, "RUN"), Catch::Contains("rank 1 has 1 of its 4 steps"));
}

TEST_CASE("an epoch no rank has rows of is missing whole", "[audit]") {
  AuditedRun setup;
  setup.epochs = 3;
  Ledgers ledgers = setup.ledgers();
  for (auto& [rank, rows] : ledgers)
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const run::LedgerRow& r) { return r.epoch == 2; }),
               rows.end());
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  CHECK(result.totalMissing == 96);
  CHECK(auditedEpoch(result, 2).seen == 0);
  CHECK(auditedEpoch(result, 3).missing == 0);
}

TEST_CASE("a rank's ledger missing from the run directory is an error naming the rank", "[audit]") {
  TempDir dir;
  const AuditedRun setup;
  const Ledgers ledgers = setup.ledgers();
  {
    run::SampleLedgerWriter writer(dir.path().string(), setup.worldSize, false, 0);
    for (const auto& [rank, rows] : ledgers)
      for (const run::LedgerRow& r : rows) writer.append(rank, run::toCsvRow(r) + "\n");
    writer.flush();
  }
  const audit::AuditResult whole = audit::auditRunDirectory(dir.path().string(), 10);
  CHECK(whole.clean());
  CHECK(whole.rows == 3 * 4);
  std::filesystem::remove(dir / "sample_ledger.rank1.csv");
  CHECK_THROWS_WITH(audit::auditRunDirectory(dir.path().string(), 10),
                    Catch::Contains("ledger of rank 1") && Catch::Contains("sample_ledger.rank1.csv"));
}

TEST_CASE("a run directory without a ledger is a usage error that says to rerun with --sample-ledger", "[audit]") {
  TempDir dir;
  CHECK_THROWS_AS(audit::auditRunDirectory(dir.path().string(), 10), dtbench::common::UsageError);
  CHECK_THROWS_WITH(audit::auditRunDirectory(dir.path().string(), 10), Catch::Contains("--sample-ledger"));
  CHECK_THROWS_AS(audit::auditRunDirectory(dir / "absent", 10), dtbench::common::UsageError);
}

// A run resumed at another world size inside epoch 1 (docs/audit.md): segment 0 trained `stepsBefore`
// steps at `oldWorld` ranks, segment 1 the rest of the epoch's permutation at `newWorld`, from the
// consumed prefix (`start`, or `dealFrom` to fake a resume that deals from elsewhere), and epoch 2 whole.
namespace {

struct ResizedRun {
  int64_t datasetSize = 203;
  int64_t oldWorld = 4, oldBatch = 8;
  int64_t newWorld = 2, newBatch = 16;
  int64_t stepsBefore = 3;
  bool dropLast = false;
  uint64_t seed = 9;
  int64_t dealFrom = -1;  // -1: the consumed prefix

  static int64_t stepsOf(int64_t rest, int64_t world, int64_t batch, bool dropLast) {
    const int64_t share = dropLast ? rest / world : (rest + world - 1) / world;
    return dropLast ? share / batch : (share + batch - 1) / batch;
  }

  Ledgers ledgers() const {
    Ledgers out;
    const int64_t n = datasetSize;
    const int64_t start = dtbench::data::consumedPositions(0, stepsBefore, oldBatch, oldWorld);
    const int64_t restSteps = stepsOf(n - start, newWorld, newBatch, dropLast);
    const int64_t epoch2Steps = stepsOf(n, newWorld, newBatch, dropLast);
    const auto add = [&](int64_t segment, int64_t world, int64_t rank, int64_t batch, int64_t epoch, int64_t step,
                         int64_t globalStep, int64_t epochSteps, const std::vector<int64_t>& mine, int64_t k) {
      run::LedgerRow r;
      r.segment = segment;
      r.worldSize = world;
      r.rank = rank;
      r.epoch = epoch;
      r.step = step;
      r.globalStep = globalStep;
      r.datasetSize = n;
      r.batchSize = batch;
      r.epochSteps = epochSteps;
      r.dropLast = dropLast;
      r.seed = seed;
      const auto begin = mine.begin() + k * batch;
      r.indices.assign(begin, mine.begin() + std::min<int64_t>((k + 1) * batch, static_cast<int64_t>(mine.size())));
      std::sort(r.indices.begin(), r.indices.end());
      out[rank].push_back(r);
    };
    const int64_t oldSteps = stepsOf(n, oldWorld, oldBatch, dropLast);
    for (int64_t rank = 0; rank < oldWorld; ++rank) {
      const auto mine = dtbench::data::DistributedSampler(n, rank, oldWorld, seed, true, dropLast).indices(1);
      for (int64_t k = 0; k < stepsBefore; ++k) add(0, oldWorld, rank, oldBatch, 1, k + 1, k + 1, oldSteps, mine, k);
    }
    for (int64_t rank = 0; rank < newWorld; ++rank) {
      const auto rest = dtbench::data::DistributedSampler(n, rank, newWorld, seed, true, dropLast,
                                                          dealFrom >= 0 ? dealFrom : start)
                            .indices(1);
      for (int64_t k = 0; k < restSteps; ++k)
        add(1, newWorld, rank, newBatch, 1, stepsBefore + k + 1, stepsBefore + k + 1, stepsBefore + restSteps, rest, k);
      const auto whole = dtbench::data::DistributedSampler(n, rank, newWorld, seed, true, dropLast).indices(2);
      for (int64_t k = 0; k < epoch2Steps; ++k)
        add(1, newWorld, rank, newBatch, 2, k + 1, stepsBefore + restSteps + k + 1, epoch2Steps, whole, k);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("an epoch continued at another world size is checked in full", "[audit][resize]") {
  for (const bool dropLast : {false, true}) {
    for (const auto& [oldWorld, oldBatch, newWorld, newBatch] :
         {std::tuple{4, 8, 2, 16}, std::tuple{2, 16, 4, 8}, std::tuple{4, 8, 3, 8}}) {
      ResizedRun resized;
      resized.dropLast = dropLast;
      resized.oldWorld = oldWorld;
      resized.oldBatch = oldBatch;
      resized.newWorld = newWorld;
      resized.newBatch = newBatch;
      const audit::AuditResult result = audit::auditLedgers(resized.ledgers(), 10);
      INFO("drop-last " << dropLast << ", " << oldWorld << " -> " << newWorld << "\n"
                        << audit::renderAudit(result, "resized"));
      CHECK(result.clean());
      const audit::EpochAudit& e = auditedEpoch(result, 1);
      CHECK(e.coverageChecked);
      CHECK_FALSE(e.partial);
      CHECK(e.segments == 2);
      CHECK(e.ranks == std::max(oldWorld, newWorld));
      CHECK(e.missing == 0);
      CHECK(e.duplicates == 0);
      // Every index once, but for drop-last's or the padding's remainder of the rest, at the epoch's end.
      const int64_t start = 3 * oldBatch * oldWorld;
      const int64_t rest = resized.datasetSize - start;
      const int64_t share = dropLast ? rest / newWorld : (rest + newWorld - 1) / newWorld;
      const int64_t trained = std::min(share, ResizedRun::stepsOf(rest, newWorld, newBatch, dropLast) * newBatch);
      CHECK(e.expected == start + trained * newWorld);
      CHECK(e.seen == e.expected);
      CHECK(e.dropped + e.expected - e.padded == resized.datasetSize);
      CHECK(auditedEpoch(result, 2).segments == 1);
      CHECK(auditedEpoch(result, 2).missing == 0);
    }
  }
}

TEST_CASE("a resize that deals the rest from the epoch's start is caught", "[audit][resize]") {
  ResizedRun resized;
  resized.dealFrom = 0;  // the new world ignores the consumed prefix: it trains the first samples again
  const audit::AuditResult result = audit::auditLedgers(resized.ledgers(), 10);
  const audit::EpochAudit& e = auditedEpoch(result, 1);
  CHECK(e.coverageChecked);
  CHECK(e.duplicates > 0);
  CHECK(e.missing > 0);
  CHECK_FALSE(result.clean());
  CHECK(auditedEpoch(result, 2).missing == 0);  // the later, ordinary epoch stays clean
}

TEST_CASE("an epoch continued at another world size missing a rank's rows is not partial", "[audit][resize]") {
  ResizedRun resized;
  Ledgers ledgers = resized.ledgers();
  // Rank 3 of the old world lost its last row of epoch 1.
  auto& rows = ledgers[3];
  rows.erase(std::find_if(rows.begin(), rows.end(), [](const run::LedgerRow& r) { return r.step == 3; }));
  const audit::AuditResult result = audit::auditLedgers(ledgers, 10);
  const audit::EpochAudit& e = auditedEpoch(result, 1);
  CHECK_FALSE(e.partial);
  CHECK(e.missing == resized.oldBatch);
  CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& note) {
    return note.find("rank 3 of segment 0 has 2 of its 3 steps") != std::string::npos;
  }));
}
