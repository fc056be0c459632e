#pragma once
// isPlainFileName: whether a name read from a file (a capture file's pcap, a report's list of the
// files it wrote) names a file inside one directory, so that reading or deleting it never reaches
// outside: not empty, no '/', not "." or "..", no NUL.

#include <string>

namespace dtbench::common {

bool isPlainFileName(const std::string& name);

}  // namespace dtbench::common
