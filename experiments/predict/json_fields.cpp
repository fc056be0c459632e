#include "experiments/predict/json_fields.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/strict_json.h"
#include "common/usage_error.h"

namespace dtbench::predict {

void JsonFields::fail(const std::string& what) const {
  throw common::UsageError(source_ + ": " + what + " (docs/predict.md, \"" + section_ + "\")");
}

void JsonFields::onlyKeys(const nlohmann::json& object, const std::set<std::string>& allowed,
                          const std::string& where) const {
  for (const auto& item : object.items())
    if (!allowed.count(item.key())) fail("unknown key '" + where + item.key() + "'");
}

double JsonFields::number(const nlohmann::json& object, const std::string& key, const std::string& where,
                          bool zeroAllowed, double most) const {
  if (!object.contains(key)) fail(where + key + " is missing");
  const nlohmann::json& v = object.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (!zeroAllowed && v.get<double>() == 0) ||
      v.get<double>() > most) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", most);
    fail(where + key + " must be a " + (zeroAllowed ? "non-negative" : "positive") + " number, at most " + limit);
  }
  return v.get<double>();
}

int64_t JsonFields::whole(const nlohmann::json& object, const std::string& key, const std::string& where,
                          int64_t least, int64_t most) const {
  if (!object.contains(key)) fail(where + key + " is missing");
  const nlohmann::json& v = object.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > most)
    fail(where + key + " must be a whole number from " + std::to_string(least) + " to " + std::to_string(most));
  return v.get<int64_t>();
}

std::string JsonFields::text(const nlohmann::json& object, const std::string& key, const std::string& where) const {
  if (!object.contains(key)) fail(where + key + " is missing");
  if (!object.at(key).is_string()) fail(where + key + " must be text");
  return object.at(key).get<std::string>();
}

bool JsonFields::flag(const nlohmann::json& object, const std::string& key, const std::string& where) const {
  if (!object.contains(key)) fail(where + key + " is missing");
  if (!object.at(key).is_boolean()) fail(where + key + " must be true or false");
  return object.at(key).get<bool>();
}

nlohmann::json readInputFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path);
  if (!in) throw common::UsageError(flag + ": cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return common::parseStrictJson(text.str(), flag + ": " + path);
  } catch (const std::runtime_error& e) {
    throw common::UsageError(e.what());
  }
}

}  // namespace dtbench::predict
