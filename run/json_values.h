#pragma once
// Reading the JSON files of a run directory (config.json's facts, summary.json, a checkpoint's
// state.json) the same forgiving way: a key that is absent keeps its default (a run written before
// the key existed still reads), and a value of the wrong type is named in one sentence and skipped,
// never guessed. `JsonFields::read` runs one key's reader; the value readers below throw
// std::invalid_argument "takes <what>, got <value>" for it to name.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::run {

[[noreturn]] void wrongValue(const char* takes, const nlohmann::json& value);

int64_t wholeValue(const nlohmann::json& value);
// A whole number from 0 to 2^40 (images, elements, bytes of one run: beyond it a value is damage, and
// products of it would overflow); std::invalid_argument "takes ..." otherwise.
int64_t countValue(const nlohmann::json& value);
double numberValue(const nlohmann::json& value);  // a number; null reads as NaN (JSON has no NaN)
bool booleanValue(const nlohmann::json& value);
std::string textValue(const nlohmann::json& value);
std::optional<std::string> textOrNull(const nlohmann::json& value);

template <typename T, typename Read>
std::vector<T> listValue(const nlohmann::json& value, Read read) {
  if (!value.is_array()) wrongValue("a list", value);
  std::vector<T> out;
  for (const nlohmann::json& item : value) out.push_back(read(item));
  return out;
}

// The JSON value of the run directory's file `path`, or null with one sentence added to `problems`:
// "no summary.json" when it is missing, "summary.json is not valid JSON (...)", or why it cannot be
// opened (not a regular file: common/regular_file.h).
nlohmann::json readJsonOrProblem(const std::string& path, std::vector<std::string>& problems);

// The keys of one JSON object, each read by its own reader. A problem reads
// "<where><key> takes <what>, got <value>", where `where` names the file and the object
// ("summary.json: ", "summary.json: epochs[1].").
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where, std::vector<std::string>& problems)
      : object_(object), where_(std::move(where)), problems_(problems) {}

  // Runs `reader` on the value of `key` when the object has it; `required`: an absent key is a
  // problem too ("<where><key> is missing").
  void read(const char* key, const std::function<void(const nlohmann::json&)>& reader, bool required = false) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
  std::vector<std::string>& problems_;
};

}  // namespace dtbench::run
