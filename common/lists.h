#pragma once
// Lists written as text: comma-separated flag values ("ring,tree", "time_speedup,bandwidth") and
// lists of names in messages and help texts ("valid topologies: native, ring, tree"). The one
// splitter and the one joiner every layer uses.

#include <string>
#include <vector>

namespace dtbench::common {

// The non-empty items of `text` split at commas, in order ("a,,b," -> a, b).
std::vector<std::string> splitList(const std::string& text);

// The items with `separator` between them: joinList({"a", "b"}) == "a, b"; "" for none.
std::string joinList(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace dtbench::common
