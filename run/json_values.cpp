#include "run/json_values.h"

#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "common/regular_file.h"

namespace dtbench::run {

void wrongValue(const char* takes, const nlohmann::json& value) {
  throw std::invalid_argument(std::string("takes ") + takes + ", got " + value.dump());
}

int64_t wholeValue(const nlohmann::json& value) {
  if (!value.is_number_integer()) wrongValue("a whole number", value);
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    wrongValue("a whole number in range", value);
  return value.get<int64_t>();
}

int64_t countValue(const nlohmann::json& value) {
  constexpr int64_t kMost = int64_t{1} << 40;
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{kMost}) ||
      value.get<int64_t>() < 0 || value.get<int64_t>() > kMost)
    wrongValue("a count from 0 to 1099511627776", value);
  return value.get<int64_t>();
}

double numberValue(const nlohmann::json& value) {
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!value.is_number()) wrongValue("a number", value);
  return value.get<double>();
}

bool booleanValue(const nlohmann::json& value) {
  if (!value.is_boolean()) wrongValue("true or false", value);
  return value.get<bool>();
}

std::string textValue(const nlohmann::json& value) {
  if (!value.is_string()) wrongValue("a string", value);
  return value.get<std::string>();
}

std::optional<std::string> textOrNull(const nlohmann::json& value) {
  return value.is_null() ? std::nullopt : std::optional(textValue(value));
}

nlohmann::json readJsonOrProblem(const std::string& path, std::vector<std::string>& problems) {
  const std::filesystem::path file(path);
  if (!std::filesystem::exists(file)) {
    problems.push_back("no " + file.filename().string());
    return nullptr;
  }
  try {
    std::ifstream in = common::openRegularFile(path);
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    problems.push_back(file.filename().string() + " is not valid JSON (" + e.what() + ")");
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  return nullptr;
}

void JsonFields::read(const char* key, const std::function<void(const nlohmann::json&)>& reader, bool required) const {
  if (!object_.is_object() || !object_.contains(key)) {
    if (required) problems_.push_back(where_ + key + " is missing");
    return;
  }
  try {
    reader(object_.at(key));
  } catch (const std::exception& e) {
    problems_.push_back(where_ + key + " " + e.what());
  }
}

}  // namespace dtbench::run
