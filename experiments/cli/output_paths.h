#pragma once
// Output destinations of the commands that write files (report's --csv-dir, --plots and --job-table,
// sweep's --plots), checked (and a directory created) before any work, so a bad path fails before a
// table is printed or a sweep runs rather than after.

#include <string>

namespace dtbench::experiments {

// Throws common::UsageError naming `flag` when `path` is a file, cannot be created or is not writable.
void prepareOutputDirectory(const std::string& path, const char* flag);
// Throws common::UsageError naming `flag` when `path` is a directory, its directory is missing, or it
// cannot be written.
void checkOutputFile(const std::string& path, const char* flag);

}  // namespace dtbench::experiments
