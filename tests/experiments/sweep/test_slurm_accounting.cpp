// A Slurm sweep's accounting file (experiments/sweep/slurm_accounting.h): the job ids of its run
// directories, the sacct command of the report's contract, and DIR/sacct.txt from a stand-in sacct
// on PATH (no Slurm needed).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/report/jobs/sacct_file.h"
#include "experiments/sweep/slurm_accounting.h"
#include "experiments/sweep/sweep_session.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using dtbench::sweep::sacctCommand;
using dtbench::sweep::sweepJobIds;
using dtbench::sweep::writeSweepAccounting;

namespace {

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// PATH with `dir` first for the scope's life.
class PathFirst {
 public:
  explicit PathFirst(const std::string& dir) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~PathFirst() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

// A stand-in `sacct` in `dir` that appends its arguments to dir/args and prints `output`, exiting `code`.
void fakeSacct(const fs::path& dir, const std::string& output, int code) {
  writeFile(dir / "out.txt", output);
  writeFile(dir / "sacct", "#!/bin/sh\necho \"$@\" >>'" + (dir / "args").string() + "'\ncat '" +
                               (dir / "out.txt").string() + "'\n" + (code ? "echo 'sacct: error: Slurm accounting storage is disabled' >&2\n" : "") +
                               "exit " + std::to_string(code) + "\n");
  chmod((dir / "sacct").c_str(), 0755);
}

const std::string kEnded =
    std::string(dtbench::report::kSacctHeader) +
    "\n11|p|root|cluster|REQUEUED|0:0|2026-11-26T08:00:00|2026-11-26T08:00:01|2026-11-26T08:00:05|4|1|billing=1,cpu=1,gres/gpu=1,node=1\n"
    "11|p|root|cluster|COMPLETED|0:0|2026-11-26T08:00:05|2026-11-26T08:00:07|2026-11-26T08:00:09|2|1|billing=1,cpu=1,gres/gpu=1,node=1\n"
    "12|q|root|cluster|FAILED|3:0|2026-11-26T08:00:00|2026-11-26T08:00:02|2026-11-26T08:00:03|1|1|billing=1,cpu=1,gres/gpu=1,node=1\n";

}  // namespace

TEST_CASE("a sweep's job ids are its run directories' slurm_job_id") {
  dtbench::testing::TempDir dir;
  writeFile(dir.path() / "a" / "config.json", R"({"slurm_job_id": "12"})");
  writeFile(dir.path() / "a.attempt-1" / "config.json", R"({"slurm_job_id": "11"})");
  writeFile(dir.path() / "b" / "config.json", R"({"slurm_job_id": null})");
  fs::create_directories(dir.path() / "c");
  writeFile(dir.path() / "d" / "config.json", "{not json");
  writeFile(dir.path() / "e" / "config.json", R"({"slurm_job_id": "12"})");
  CHECK(sweepJobIds(dir.path().string()) == std::vector<std::string>{"11", "12"});
}

TEST_CASE("the sacct command is the report's contract for the sweep's jobs") {
  CHECK(sacctCommand({"11", "12"}) ==
        std::vector<std::string>{"sacct", "-a", "-D", "-X", "-S", "2000-01-01", "--parsable2",
                                 "--format=JobID,JobName,User,Partition,State,ExitCode,Submit,Start,End,ElapsedRaw,"
                                 "NNodes,AllocTRES",
                                 "-j", "11,12"});
}

TEST_CASE("sacct's answer becomes DIR/sacct.txt and a Slurm without accounting leaves none") {
  dtbench::testing::TempDir bin, out;
  const PathFirst path(bin.path().string());
  dtbench::sweep::SweepSession session(out.path().string());
  std::FILE* notes = std::tmpfile();
  REQUIRE(notes != nullptr);

  SECTION("every job ended: one call, the file is its output") {
    fakeSacct(bin.path(), kEnded, 0);
    const std::string file = writeSweepAccounting(out.path().string(), {"11", "12"}, session, notes);
    CHECK(file == (out.path() / "sacct.txt").string());
    CHECK(readFile(file) == kEnded);
    CHECK(readFile(bin.path() / "args") ==
          "-a -D -X -S 2000-01-01 --parsable2 --format=JobID,JobName,User,Partition,State,ExitCode,Submit,Start,End,"
          "ElapsedRaw,NNodes,AllocTRES -j 11,12\n");
    CHECK_FALSE(fs::exists(out.path() / "sacct.txt.tmp"));
  }
  SECTION("accounting disabled: no file, a note, no failure") {
    fakeSacct(bin.path(), "", 1);
    CHECK(writeSweepAccounting(out.path().string(), {"11"}, session, notes).empty());
    CHECK_FALSE(fs::exists(out.path() / "sacct.txt"));
    std::rewind(notes);
    char text[512] = {};
    CHECK(std::string(text, std::fread(text, 1, sizeof text - 1, notes)).find("accounting storage is disabled") !=
          std::string::npos);
  }
  SECTION("no job ids: sacct is not run") {
    fakeSacct(bin.path(), kEnded, 0);
    CHECK(writeSweepAccounting(out.path().string(), {}, session, notes).empty());
    CHECK_FALSE(fs::exists(bin.path() / "args"));
  }
  std::fclose(notes);
}
