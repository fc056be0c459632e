// report::OutputSet: a report's files in an output directory replaced as a set; other files kept.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "experiments/report/output_set.h"
#include "temp_dir.h"

using dtbench::report::OutputSet;

TEST_CASE("a report's output files are replaced as a set and no other file is touched", "[report][output]") {
  dtbench::testing::TempDir dir;
  const auto write = [&](const std::string& name) { std::ofstream(dir / name) << name << '\n'; };
  const auto exists = [&](const std::string& name) { return std::filesystem::exists(dir / name); };
  write("notes.txt");  // the user's, never listed
  write("time_speedup.csv");
  write("trace_jobs.csv");
  OutputSet first(dir.path().string());
  first.add(dir / "time_speedup.csv");
  first.add("trace_jobs.csv");
  first.add("/elsewhere/other.csv");  // not in the directory: ignored
  first.commit();
  CHECK(exists(OutputSet::kListName));

  // The next report has no job traces: its trace_jobs.csv would be stale.
  write("time_speedup.csv");
  OutputSet second(dir.path().string());
  second.add(dir / "time_speedup.csv");
  second.commit();
  CHECK(exists("time_speedup.csv"));
  CHECK_FALSE(exists("trace_jobs.csv"));
  CHECK(exists("notes.txt"));

  // A list naming a path outside the directory, or one that is no JSON, removes nothing.
  std::ofstream(dir / OutputSet::kListName) << R"({"files": ["../escape.csv", "/tmp/x", "notes.txt"]})";
  OutputSet third(dir.path().string());
  third.add(dir / "time_speedup.csv");
  third.commit();
  CHECK_FALSE(exists("notes.txt"));  // it was named by the list, so it was the report's
  write("notes.txt");
  std::ofstream(dir / OutputSet::kListName) << "{not json";
  OutputSet fourth(dir.path().string());
  fourth.commit();
  CHECK(exists("notes.txt"));
  CHECK(exists("time_speedup.csv"));
}
