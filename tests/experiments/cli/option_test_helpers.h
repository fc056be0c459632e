#pragma once
// What the subcommands' option tests share: the message of the usage error a parse throws, and a help
// text as words.

#include <cctype>
#include <string>
#include <vector>

#include "common/usage_error.h"

namespace dtbench::test {

// The message of the common::UsageError that `parse(args)` throws; "" when it throws none.
template <typename Parse>
std::string usageErrorOf(Parse parse, const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const common::UsageError& e) {
    return e.what();
  }
  return "";
}

// `text` with every run of whitespace one space: --help as words, whatever its line breaks.
inline std::string asWords(const std::string& text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

}  // namespace dtbench::test
