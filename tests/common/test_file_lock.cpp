// common::FileLock: one holder at a time, the holder named to a refused one, released when the
// holder goes (also when its process is killed).

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

#include "common/file_lock.h"
#include "temp_dir.h"

using dtbench::common::FileLock;
using dtbench::common::FileLockHeld;

TEST_CASE("a file lock has one holder, named to whoever is refused", "[common][lock]") {
  dtbench::testing::TempDir dir;
  const std::string path = dir / "x.lock";
  CHECK_FALSE(FileLock::isHeld(path));  // no file yet
  std::optional<FileLock> first(std::in_place, path);
  CHECK(FileLock::isHeld(path));
  std::string owner;
  try {
    FileLock second(path);
    FAIL("a second FileLock of a held file was taken");
  } catch (const FileLockHeld& held) {
    owner = held.owner();
  }
  CHECK(owner == "pid " + std::to_string(::getpid()) + ", host " + dtbench::common::thisHost());
  first.reset();
  CHECK_FALSE(FileLock::isHeld(path));
  CHECK_NOTHROW(FileLock(path));
  CHECK_THROWS_WITH(FileLock(dir / "missing-dir/x.lock"), Catch::Contains("cannot create") && Catch::Contains("x.lock"));
}

TEST_CASE("a file lock whose holder was killed is free again", "[common][lock]") {
  dtbench::testing::TempDir dir;
  const std::string path = dir / "x.lock";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const FileLock held(path);
    const char byte = 1;
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  CHECK(FileLock::isHeld(path));
  CHECK_THROWS_AS(FileLock(path), FileLockHeld);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(FileLock::isHeld(path));
  CHECK_NOTHROW(FileLock(path));
  ::close(ready[0]);
  ::close(ready[1]);
}
