#include "common/strict_json.h"

#include <set>
#include <stdexcept>
#include <vector>

namespace dtbench::common {

nlohmann::json parseStrictJson(const std::string& text, const std::string& where) {
  // One set of keys per object being read, innermost last.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  const nlohmann::json::parser_callback_t seeKeys = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                                                        nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      keys.emplace_back();
    } else if (event == Event::object_end) {
      keys.pop_back();
    } else if (event == Event::key) {
      const std::string key = parsed.get<std::string>();
      if (!keys.back().insert(key).second && duplicate.empty())
        duplicate = "key '" + key + "' appears twice in one object";
    }
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text, seeKeys);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(where + ": not valid JSON: " + e.what());
  }
  if (!duplicate.empty()) throw std::runtime_error(where + ": " + duplicate + "; write each key once");
  return value;
}

}  // namespace dtbench::common
