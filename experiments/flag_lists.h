#pragma once
// Comma-separated flag values ("ring,tree", "time_speedup,bandwidth"): the one splitter every
// subcommand's option parser uses.

#include <string>
#include <vector>

namespace dtbench::experiments {

// The non-empty items of `text` split at commas, in order ("a,,b," -> a, b).
std::vector<std::string> splitList(const std::string& text);

}  // namespace dtbench::experiments
