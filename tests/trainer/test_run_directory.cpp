#include "catch_torch.h"
#include "trainer/step_record.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "trainer/run_directory.h"

using dtbench::testing::TempDir;
using dtbench::trainer::HistoryRow;
using dtbench::trainer::RunDirectory;

namespace {

std::vector<std::string> lines(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("the run directory writes the contract's headers and rows", "[run_directory]") {
  TempDir tmp;
  const std::string path = tmp / "run";
  {
    RunDirectory dir(path);
    dir.writeConfig({{"seed", 7}});
    dtbench::trainer::StepRecord r;
    r.epoch = 1;
    r.step = 1;
    r.samples = 32;
    r.stepS = 0.5;
    dir.appendBatch(r);
    dir.appendHistory({1700000000.25, "Batch", 1, 1, 2.5, 0.125, 64.0});
    dir.appendHistory({1700000001.5, "Epoch", 1, 1, 2.5, std::numeric_limits<double>::quiet_NaN(), 64.0});
    dir.flush();
    dir.writeSummary({{"status", "completed"}});
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
        "step_s,bytes_sent,bytes_recv");
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
  { RunDirectory(path).writeSummary({{"status", "completed"}}); }
  CHECK_THROWS_WITH(RunDirectory(path), Catch::Contains("already holds a run") && Catch::Contains("--out"));
  std::ifstream summary(path + "/summary.json");
  CHECK(nlohmann::json::parse(summary).at("status") == "completed");
}

TEST_CASE("an unwritable run directory is a clear error", "[run_directory]") {
  TempDir tmp;
  std::ofstream(tmp / "file") << "x";
  CHECK_THROWS_WITH(RunDirectory(tmp / "file/run"), Catch::Contains("cannot create run directory"));
}
