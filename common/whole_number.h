#pragma once
// A whole number written as text: the one strict reader behind every flag, environment variable, CSV
// cell and grid value that must hold an integer. Strict: decimal digits with an optional leading '-',
// nothing else (no sign '+', no space, no trailing text), in range of long long; callers add their own
// bounds and the message that names what to fix.

#include <optional>
#include <string>

namespace dtbench::common {

// The value of `text`, or nullopt when it is not exactly a whole number ("", " 5", "5x", "+5", "1e3",
// "9223372036854775808").
std::optional<long long> wholeNumber(const std::string& text);

}  // namespace dtbench::common
