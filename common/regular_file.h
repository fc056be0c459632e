#pragma once
// The report reads only regular files (or links to them). Opening a FIFO blocks until some process
// writes to it, so a run directory holding one would hang the report; a directory opens as an
// empty stream and would be reported as an empty file. Both are errors that name the path.

#include <fstream>
#include <string>

namespace dtbench::common {

// `path` opened for reading. Throws std::runtime_error naming the path when it does not exist, is
// a directory, a FIFO, a socket or a device, or cannot be opened.
std::ifstream openRegularFile(const std::string& path);

}  // namespace dtbench::common
