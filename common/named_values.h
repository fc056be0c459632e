#pragma once
// NamedValues<Enum>: the names of a closed set of choices (an enum class), so that a flag's text is
// parsed into the enum once, at the command line, and the enum is written back as its name only
// where text is the contract (config.json, tables). Everything between compares enums, never text.
//
// Two ways to say that a name is not in the set, chosen by the constructor:
//   a noun    "unknown optimizer 'lamb' (--optimizer); valid optimizers: sgd, adam, rmsprop"
//   no noun   "--format must be md, csv or json, got 'xml'"  (small sets read best as a sentence)
// Both are UsageError (exit code 2). Worked example:
//   enum class Fruit { kApple, kPear };
//   const NamedValues<Fruit> kFruits({"fruit", "fruits"}, "--fruit",
//                                    {{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}});
//   kFruits.parse("pear") == Fruit::kPear; kFruits.name(Fruit::kApple) == "apple";
//   kFruits.parse("fig") throws "unknown fruit 'fig' (--fruit); valid fruits: apple, pear".

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/lists.h"
#include "common/usage_error.h"

namespace dtbench::common {

struct Noun {
  const char* singular;
  const char* plural;
};

template <typename Enum>
struct NamedValue {
  Enum value;
  const char* name;
};

template <typename Enum>
class NamedValues {
 public:
  NamedValues(Noun noun, std::string flag, std::initializer_list<NamedValue<Enum>> values)
      : noun_(noun), flag_(std::move(flag)), values_(values) {}
  NamedValues(std::string flag, std::initializer_list<NamedValue<Enum>> values)
      : flag_(std::move(flag)), values_(values) {}
  // A set whose names come from a table of rows (e.g. comm/backends/backend.h's backendRows()).
  NamedValues(Noun noun, std::string flag, std::vector<NamedValue<Enum>> values)
      : noun_(noun), flag_(std::move(flag)), values_(std::move(values)) {}

  // The enum named `text` (exactly as listed); throws UsageError naming the flag and the valid names.
  Enum parse(const std::string& text) const {
    for (const NamedValue<Enum>& v : values_)
      if (text == v.name) return v.value;
    if (noun_.singular != nullptr)
      throw UsageError("unknown " + std::string(noun_.singular) + " '" + text + "' (" + flag_ + "); valid " +
                       noun_.plural + ": " + joined());
    throw UsageError(flag_ + " must be " + joined(", ", " or ") + ", got '" + text + "'");
  }

  bool contains(const std::string& text) const {
    for (const NamedValue<Enum>& v : values_)
      if (text == v.name) return true;
    return false;
  }

  // The name of `value`; a value missing from the table is a programming error (std::logic_error).
  const char* name(Enum value) const {
    for (const NamedValue<Enum>& v : values_)
      if (v.value == value) return v.name;
    throw std::logic_error("NamedValues for " + flag_ + ": a value without a name");
  }

  std::vector<std::string> names() const {
    std::vector<std::string> all;
    for (const NamedValue<Enum>& v : values_) all.emplace_back(v.name);
    return all;
  }

  // "a, b, c", or with lastSeparator " or ": "a, b or c".
  std::string joined(const std::string& separator = ", ", const std::string& lastSeparator = "") const {
    std::vector<std::string> all = names();
    if (lastSeparator.empty() || all.size() < 2) return joinList(all, separator);
    const std::string last = all.back();
    all.pop_back();
    return joinList(all, separator) + lastSeparator + last;
  }

  const std::string& flag() const { return flag_; }

 private:
  Noun noun_{nullptr, nullptr};
  std::string flag_;
  std::vector<NamedValue<Enum>> values_;
};

}  // namespace dtbench::common
