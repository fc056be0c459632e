#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/named_values.h"
#include "common/usage_error.h"

using dtbench::common::NamedValues;
using dtbench::common::UsageError;

namespace {

enum class Fruit { kApple, kPear, kFig };

const NamedValues<Fruit> kFruits({"fruit", "fruits"}, "--fruit", {{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}});
const NamedValues<Fruit> kSmall("--fruit", {{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}, {Fruit::kFig, "fig"}});

std::string messageOf(const NamedValues<Fruit>& names, const std::string& text) {
  try {
    names.parse(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a name parses to its value and back", "[named_values]") {
  CHECK(kFruits.parse("pear") == Fruit::kPear);
  CHECK(std::string(kFruits.name(Fruit::kApple)) == "apple");
  CHECK(kFruits.names() == std::vector<std::string>{"apple", "pear"});
  CHECK(kFruits.contains("apple"));
  CHECK_FALSE(kFruits.contains("Apple"));  // names are exact
  CHECK(kSmall.joined(", ", " or ") == "apple, pear or fig");
}

TEST_CASE("an unknown name says which flag and lists the valid ones", "[named_values]") {
  CHECK(messageOf(kFruits, "fig") == "unknown fruit 'fig' (--fruit); valid fruits: apple, pear");
  CHECK(messageOf(kSmall, "kiwi") == "--fruit must be apple, pear or fig, got 'kiwi'");
  CHECK_THROWS_AS(kFruits.name(Fruit::kFig), std::logic_error);  // a value the table lacks is a bug
}
