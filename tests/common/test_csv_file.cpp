// How the report opens and reads a run's files (common/csv_file.h, regular_file.h): a
// byte order mark is skipped, a FIFO or a directory is an error naming the path (never a hang, never
// "empty"), and errors name the line a row came from.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/csv_file.h"
#include "common/regular_file.h"

using dtbench::common::CsvFile;
using dtbench::common::openRegularFile;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

struct CsvTempDir {
  fs::path path;
  CsvTempDir() {
    std::string pattern = (fs::temp_directory_path() / "dtbench-csv-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~CsvTempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

}  // namespace

TEST_CASE("a UTF-8 byte order mark before the header is skipped", "[report][csv]") {
  const CsvTempDir dir;
  const CsvFile f = CsvFile::read(dir.write("b.csv", "\xEF\xBB\xBFrank,step_s\r\n0,0.5\r\n"));
  REQUIRE(f.hasColumn("rank"));
  CHECK(f.integer(0, f.column("rank")) == 0);
  CHECK(f.number(0, f.column("step_s")) == 0.5);
  CHECK_THROWS_WITH(CsvFile::read(dir.write("empty.csv", "\xEF\xBB\xBF\n")), Contains("is empty (no header line)"));
}

TEST_CASE("a FIFO or a directory is an error naming the path, and nothing blocks", "[report][csv]") {
  const CsvTempDir dir;
  const std::string fifo = (dir.path / "batches.csv").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening the FIFO would wait for a writer forever: the check comes before the open.
  CHECK_THROWS_WITH(CsvFile::read(fifo), Contains(fifo) && Contains("is a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(openRegularFile(fifo), Contains(fifo));
  const std::string sub = (dir.path / "traffic.csv").string();
  fs::create_directory(sub);
  CHECK_THROWS_WITH(CsvFile::read(sub), Contains(sub) && Contains("is a directory, not a regular file"));
  CHECK_THROWS_WITH(CsvFile::read((dir.path / "absent.csv").string()), Contains("absent.csv: no such file"));
  // A link to a regular file is read.
  const std::string target = dir.write("real.csv", "a\n1\n");
  fs::create_symlink(target, dir.path / "link.csv");
  CHECK(CsvFile::read((dir.path / "link.csv").string()).rows() == 1);
}

TEST_CASE("errors name the line the row came from, blank lines counted", "[report][csv]") {
  const CsvTempDir dir;
  const CsvFile f = CsvFile::read(dir.write("h.csv", "a,b\n1,2\n\n3,x\n"));
  REQUIRE(f.rows() == 2);
  CHECK(f.line(1) == 4);
  CHECK_THROWS_WITH(f.number(1, f.column("b")), Contains("h.csv line 4 column 'b': 'x' is not a number"));
  CHECK_THROWS_WITH(f.fail(0, f.column("a"), "too small"), Contains("h.csv line 2 column 'a': too small"));
}
