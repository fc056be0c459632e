#pragma once
// FileLock: one process's exclusive hold on a file, for the things only one process may do at a
// time: write a run directory, run a sweep in an --out, record one node's capture, analyze one
// capture directory.
//
// Contract
//   FileLock(path)  creates `path` when missing and takes an exclusive flock(2) on it without
//                   waiting. When another process (or another FileLock of this one) holds it,
//                   throws FileLockHeld, whose owner() is "pid N, host H" as the holder wrote it
//                   (or says the holder has not written it yet); the caller turns it into its own
//                   message. Throws std::runtime_error naming the file, with the system's reason,
//                   when the file cannot be created or written. On a filesystem without flock
//                   (Lustre without -o flock) it warns on stderr and holds the file unchecked.
//   held            the holder writes "pid N host H" into the file once the lock is its own.
//   release         when the FileLock is destroyed, or when its process ends in any way (SIGKILL
//                   included): no stale lock is ever left. The file stays, for the next holder.
//   isHeld(path)    true when some process holds `path` now (takes and drops the lock to see; a
//                   missing file is not held). Move-only.

#include <stdexcept>
#include <string>

namespace dtbench::common {

class FileLockHeld : public std::runtime_error {
 public:
  FileLockHeld(const std::string& path, std::string owner);
  const std::string& owner() const { return owner_; }

 private:
  std::string owner_;
};

class FileLock {
 public:
  explicit FileLock(std::string path);
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& path() const { return path_; }

  static bool isHeld(const std::string& path);

 private:
  std::string path_;
  int fd_ = -1;
};

// This machine's host name ("unknown" when it cannot be read).
std::string thisHost();

}  // namespace dtbench::common
