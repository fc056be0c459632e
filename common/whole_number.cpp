#include "common/whole_number.h"

#include <charconv>
#include <system_error>

namespace dtbench::common {

std::optional<long long> wholeNumber(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);  // no '+', no spaces: as wanted
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace dtbench::common
