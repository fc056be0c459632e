#include <catch2/catch.hpp>
#include "run/step_record.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "file_size_limit.h"
#include "temp_dir.h"
#include "run/run_directory.h"

namespace run = dtbench::run;

using dtbench::testing::TempDir;
using dtbench::run::describeLogPrefixMismatch;
using dtbench::run::HistoryRow;
using dtbench::run::RunDirectory;
using dtbench::run::RunDirectoryLock;

namespace {

std::vector<std::string> lines(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string readText(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string thisHost() {
  char name[256] = "";
  ::gethostname(name, sizeof name - 1);
  return name;
}

// "(pid P, host H)" as the refusal names this process.
std::string ownedByThisProcess() {
  return "is in use by a running dtbench (pid " + std::to_string(::getpid()) + ", host " + thisHost() + ")";
}

run::RunSummary completedSummary() {
  run::RunSummary summary;
  summary.status = run::RunOutcome::kCompleted;
  return summary;
}

}  // namespace

TEST_CASE("the run directory writes the contract's headers and rows", "[run_directory]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  {
    run::RunDirectory dir(path);
    dir.writeConfig({{"seed", 7}});
    dtbench::run::StepRecord r;
    r.epoch = 1;
    r.step = 1;
    r.samples = 32;
    r.stepS = 0.5;
    dir.appendBatch(r);
    dir.appendHistory({1700000000.25, run::HistoryRowType::kBatch, 1, 1, 2.5, 0.125, 64.0});
    dir.appendHistory({1700000001.5, run::HistoryRowType::kEpoch, 1, 1, 2.5, std::numeric_limits<double>::quiet_NaN(), 64.0});
    dir.flush();
    dir.writeSummary(completedSummary());
  }
  const auto history = lines(path + "/train_history.log");
  REQUIRE(history.size() == 3);
  CHECK(history[0] == "Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec");
  CHECK(history[1] == "1700000000.250000,Batch,1,1,2.500000,0.125000,64.000");
  CHECK(history[2] == "1700000001.500000,Epoch,1,1,2.500000,,64.000");  // no accuracy measured: empty

  const auto batches = lines(path + "/batches.csv");
  REQUIRE(batches.size() == 2);
  CHECK(batches[0] ==
        "rank,epoch,step,samples,data_s,h2d_s,forward_s,backward_s,comm_total_s,comm_exposed_s,optimizer_s,"
        "step_s,bytes_sent,bytes_recv,compress_s,grad_collectives");
  CHECK(batches[1].rfind("0,1,1,32,", 0) == 0);

  std::ifstream summary(path + "/summary.json");
  CHECK(nlohmann::json::parse(summary).at("status") == "completed");
  std::ifstream config(path + "/config.json");
  CHECK(nlohmann::json::parse(config).at("seed") == 7);
  CHECK_FALSE(std::filesystem::exists(path + "/summary.json.tmp"));
}

TEST_CASE("a directory that holds a run is never overwritten", "[run_directory]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  { run::RunDirectory(path).writeSummary(completedSummary()); }
  CHECK_THROWS_WITH(run::RunDirectory(path), Catch::Contains("already holds a run") && Catch::Contains("--out"));
  std::ifstream summary(path + "/summary.json");
  CHECK(nlohmann::json::parse(summary).at("status") == "completed");
}

TEST_CASE("an unwritable run directory is a clear error", "[run_directory]") {
  TempDir tmp;
  std::ofstream(tmp / "file") << "x";
  CHECK_THROWS_WITH(run::RunDirectory(tmp / "file/run"), Catch::Contains("cannot create run directory"));
}

TEST_CASE("a second run into a directory in use is refused, naming the owner, and changes nothing",
          "[run_directory][lock]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  run::RunDirectory first(path);
  dtbench::run::StepRecord r;
  r.epoch = 1;
  r.step = 1;
  first.appendBatch(r);
  first.flush();
  const std::string batches = readText(path + "/batches.csv");
  // Before config.json exists too: the lock, not the files, says the directory is taken.
  REQUIRE_FALSE(std::filesystem::exists(path + "/config.json"));
  CHECK_THROWS_WITH(run::RunDirectory(path), Catch::Contains("run directory " + path + " " + ownedByThisProcess()) &&
                                            Catch::Contains("--out") && Catch::Contains("--resume"));
  // What --resume takes first:
  CHECK_THROWS_WITH(run::RunDirectoryLock(path), Catch::Contains(ownedByThisProcess()));
  // The refused run did not truncate the owner's log:
  CHECK(readText(path + "/batches.csv") == batches);
  first.writeConfig({{"seed", 1}});
  CHECK_THROWS_WITH(run::RunDirectory(path), Catch::Contains(ownedByThisProcess()));
}

TEST_CASE("the lock goes with its owner: a finished run's directory is refused as holding a run",
          "[run_directory][lock]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  { run::RunDirectory(path).writeConfig({{"seed", 1}}); }
  CHECK(std::filesystem::exists(path + "/dtbench.lock"));  // left behind, and free
  CHECK_THROWS_WITH(run::RunDirectory(path),
                    Catch::Contains("already holds a run (config.json)") && !Catch::Contains("in use"));
  { const run::RunDirectoryLock resume(path); }  // --resume may take it
  run::RunDirectoryLock again(path);
  const run::RunDirectoryLock moved(std::move(again));
  CHECK(moved.directory() == path);
  CHECK_THROWS_WITH(run::RunDirectoryLock(path), Catch::Contains("in use"));  // the moved lock still holds it
}

TEST_CASE("a lock held by a process that was killed is free again: no stale lock after a crash",
          "[run_directory][lock]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  std::filesystem::create_directories(path);
  // A shell locks the same file with flock(1), as a dtbench would, then becomes `sleep`, which holds
  // the lock (on its inherited descriptor) until it is killed.
  const std::string lockFile = path + "/dtbench.lock";
  const char* argv[] = {"sh", "-c", "exec 9>>\"$0\" && flock --exclusive 9 && exec sleep 60", lockFile.c_str(),
                        nullptr};
  pid_t holder = 0;
  REQUIRE(::posix_spawnp(&holder, "sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0);
  bool held = false;
  for (int tries = 0; tries < 200 && !held; ++tries) {
    try {
      const run::RunDirectoryLock probe(path);
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    } catch (const std::runtime_error& e) {
      held = true;
      CHECK_THAT(e.what(), Catch::Contains("is in use by a running dtbench (pid "));
    }
  }
  if (!held) ::kill(holder, SIGKILL);
  REQUIRE(held);
  ::kill(holder, SIGKILL);
  int status = 0;
  ::waitpid(holder, &status, 0);
  // Free once every process that shared the descriptor has exited (flock(1) itself may still be
  // ending): nobody removes the file or clears the lock.
  bool free = false;
  for (int tries = 0; tries < 200 && !free; ++tries) {
    try {
      const run::RunDirectoryLock taken(path);
      free = true;
    } catch (const std::runtime_error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  CHECK(free);
  CHECK(readText(lockFile) == "pid " + std::to_string(::getpid()) + " host " + thisHost() + "\n");
}

TEST_CASE("a checkpoint's log size must end the header and exactly its rows", "[run_directory]") {
  TempDir tmp;
  const std::string file = tmp / "log.csv";
  std::ofstream(file) << "a,b\n1,2\n3,4\n";
  CHECK(run::describeLogPrefixMismatch(file, 12, 2) == "");
  CHECK(run::describeLogPrefixMismatch(file, 8, 1) == "");
  CHECK(run::describeLogPrefixMismatch(file, 4, 0) == "");
  CHECK(run::describeLogPrefixMismatch(file, 8, 2) == "the first 8 bytes hold the header and 1 rows, not 2");
  CHECK(run::describeLogPrefixMismatch(file, 0, 0) == "byte 0 is not the end of a line");
  CHECK(run::describeLogPrefixMismatch(file, 6, 1) == "byte 6 is not the end of a line");
  CHECK(run::describeLogPrefixMismatch(file, 13, 2) == "the file holds only 12 bytes");
  CHECK(run::describeLogPrefixMismatch(tmp / "missing.csv", 4, 0) == "the file is missing or unreadable");
}

TEST_CASE("a JSON file that cannot be written leaves the old one and no temporary file", "[run_directory]") {
  TempDir tmp;
  const std::string path = tmp / "summary.json";
  dtbench::run::writeJsonAtomically(path, {{"status", "running"}});
  const std::string before = readText(path);
  {
    const dtbench::testing::FileSizeLimit limit(1024);
    CHECK_THROWS_WITH(dtbench::run::writeJsonAtomically(path, {{"status", std::string(4096, 'x')}}),
                      Catch::Contains(path + ".tmp") && Catch::Contains(std::strerror(EFBIG)));
  }
  CHECK(readText(path) == before);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}
