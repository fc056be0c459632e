#include <catch2/catch.hpp>
#include "run/sample_ledger.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace run = dtbench::run;

using dtbench::testing::TempDir;

namespace {

run::LedgerRow ledgerTestRow(int64_t rank, int64_t epoch, int64_t step, int64_t globalStep,
                             std::vector<int64_t> indices) {
  run::LedgerRow r;
  r.segment = 0;
  r.worldSize = 2;
  r.rank = rank;
  r.epoch = epoch;
  r.step = step;
  r.globalStep = globalStep;
  r.datasetSize = 100;
  r.batchSize = 8;
  r.epochSteps = 6;
  r.dropLast = true;
  r.seed = 18446744073709551615ULL;  // the largest seed survives the round trip
  r.indices = std::move(indices);
  return r;
}

std::string ledgerFileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("index ranges compress sorted runs and keep repeated indices", "[sample_ledger]") {
  CHECK(run::encodeIndexRanges({}).empty());
  CHECK(run::encodeIndexRanges({7, 3, 4, 40, 5, 6, 12, 41}) == "3-7;12;40-41");
  CHECK(run::encodeIndexRanges({5, 6, 5}) == "5;5-6");
  CHECK(run::encodeIndexRanges({9, 9, 9}) == "9;9;9");
  CHECK(run::decodeIndexRanges("3-7;12;40-41") == std::vector<int64_t>{3, 4, 5, 6, 7, 12, 40, 41});
  CHECK(run::decodeIndexRanges("5;5-6") == std::vector<int64_t>{5, 5, 6});
  const std::vector<int64_t> shuffled{31, 2, 99, 3, 0, 1, 57, 56, 58, 31};
  std::vector<int64_t> sorted = shuffled;
  std::sort(sorted.begin(), sorted.end());
  CHECK(run::decodeIndexRanges(run::encodeIndexRanges(shuffled)) == sorted);
  for (const char* bad : {"3-", "-3", "7-3", "5;3", "a", "3;;4", "3;", "1e3", "+4"})
    CHECK_THROWS_AS(run::decodeIndexRanges(bad), std::invalid_argument);
}

TEST_CASE("a ledger row is written and read back field for field", "[sample_ledger]") {
  TempDir dir;
  {
    run::SampleLedgerWriter writer(dir.path().string(), 2, /*resuming=*/false, 0);
    writer.append(0, run::toCsvRow(ledgerTestRow(0, 1, 1, 1, {10, 11, 12, 13, 50, 2, 3, 4})) + "\n");
    writer.append(1, run::toCsvRow(ledgerTestRow(1, 1, 1, 1, {20, 21, 22, 23, 24, 25, 26, 99})) + "\n");
    writer.flush();
  }
  CHECK(ledgerFileText(dir / "sample_ledger.rank0.csv") ==
        run::sampleLedgerHeader() + "\n0,2,0,1,1,1,100,8,6,1,18446744073709551615,8,2-4;10-13;50\n");
  const auto files = run::findSampleLedgers(dir.path().string());
  REQUIRE(files.size() == 2);
  CHECK(files.at(1) == dir / "sample_ledger.rank1.csv");
  const std::vector<run::LedgerRow> rows = run::readSampleLedger(files.at(1), 1);
  REQUIRE(rows.size() == 1);
  const run::LedgerRow& r = rows.front();
  CHECK(r.segment == 0);
  CHECK(r.worldSize == 2);
  CHECK(r.rank == 1);
  CHECK(r.epoch == 1);
  CHECK(r.step == 1);
  CHECK(r.globalStep == 1);
  CHECK(r.datasetSize == 100);
  CHECK(r.batchSize == 8);
  CHECK(r.epochSteps == 6);
  CHECK(r.dropLast);
  CHECK(r.seed == 18446744073709551615ULL);
  CHECK(r.indices == std::vector<int64_t>{20, 21, 22, 23, 24, 25, 26, 99});
}

TEST_CASE("a resumed ledger is cut back to the checkpoint's steps and appended to", "[sample_ledger]") {
  TempDir dir;
  {
    run::SampleLedgerWriter writer(dir.path().string(), 2, false, 0);
    for (int64_t step = 1; step <= 3; ++step)
      for (int64_t rank = 0; rank < 2; ++rank)
        writer.append(rank, run::toCsvRow(ledgerTestRow(rank, 1, step, step, {step * 10 + rank})) + "\n");
    writer.flush();
  }
  // A run killed while it wrote a row after the checkpoint leaves half a line behind.
  std::ofstream(dir / "sample_ledger.rank1.csv", std::ios::app) << "0,2,1,1,4,4,100,8,6,1,1";
  {
    run::SampleLedgerWriter writer(dir.path().string(), 2, /*resuming=*/true, /*resumedAtStep=*/2);
    writer.append(0, run::toCsvRow(ledgerTestRow(0, 1, 3, 3, {77})) + "\n");
    writer.flush();
  }
  const std::vector<run::LedgerRow> rank0 = run::readSampleLedger(dir / "sample_ledger.rank0.csv", 0);
  REQUIRE(rank0.size() == 3);
  CHECK(rank0[0].indices == std::vector<int64_t>{10});
  CHECK(rank0[1].indices == std::vector<int64_t>{20});
  CHECK(rank0[2].indices == std::vector<int64_t>{77});  // step 3 again, as the resumed run trained it
  const std::vector<run::LedgerRow> rank1 = run::readSampleLedger(dir / "sample_ledger.rank1.csv", 1);
  REQUIRE(rank1.size() == 2);
  CHECK(rank1[1].globalStep == 2);
}

TEST_CASE("a ledger that breaks the format is refused naming the line", "[sample_ledger]") {
  TempDir dir;
  const std::string path = dir / "sample_ledger.rank0.csv";
  const auto refusal = [&](const std::string& row) {
    std::ofstream(path) << run::sampleLedgerHeader() << "\n" << row << "\n";
    try {
      run::readSampleLedger(path, 0);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refusal("0,2,0,1,1,1,100,8,6,1,5,3,1-4"), Catch::Contains("line 2") && Catch::Contains("4 indices"));
  CHECK_THAT(refusal("0,2,0,1,1,1,100,8,6,1,5,2,99-100"), Catch::Contains("beyond the dataset"));
  CHECK_THAT(refusal("0,2,1,1,1,1,100,8,6,1,5,1,3"), Catch::Contains("in the ledger of rank 0"));
  CHECK_THAT(refusal("0,2,0,1,7,7,100,8,6,1,5,1,3"), Catch::Contains("epoch_steps"));
  CHECK_THAT(refusal("0,2,0,1,1,1,100,8,6,1,5,1,3\n0,2,0,1,1,2,100,8,6,1,5,1,4"), Catch::Contains("again"));
  CHECK_THAT(refusal("0,2,0,1,1,1,100,8,6,1,-5,1,3"), Catch::Contains("not a seed"));
}
