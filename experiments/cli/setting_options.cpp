#include "experiments/cli/setting_options.h"

#include <cstdint>
#include <memory>

namespace dtbench::experiments {

std::string optionName(const run::Setting& setting) { return setting.flag.substr(2); }

void addSettingOption(cxxopts::Options& options, const run::Setting& setting, const std::string& defaultText) {
  std::shared_ptr<cxxopts::Value> value;
  switch (setting.type) {
    case run::ValueType::kSwitch: value = cxxopts::value<bool>(); break;
    case run::ValueType::kInteger: value = cxxopts::value<int64_t>(); break;
    case run::ValueType::kCount: value = cxxopts::value<uint64_t>(); break;
    case run::ValueType::kNumber: value = cxxopts::value<double>(); break;
    case run::ValueType::kText:
    case run::ValueType::kTexts: value = cxxopts::value<std::string>(); break;
  }
  if (setting.type != run::ValueType::kSwitch && !defaultText.empty()) value->default_value(defaultText);
  const std::string argument = setting.flag == "--message-log" ? "DIR" : "";
  options.add_options(setting.group)(optionName(setting), setting.help, value, argument);
}

std::optional<nlohmann::json> settingValue(const cxxopts::ParseResult& parsed, const run::Setting& setting) {
  const std::string name = optionName(setting);
  if (setting.type == run::ValueType::kSwitch)
    return nlohmann::json(parsed.count(name) > 0 ? setting.switchValue : !setting.switchValue);
  if (parsed.count(name) == 0 && !parsed[name].has_default()) return std::nullopt;
  switch (setting.type) {
    case run::ValueType::kInteger: return nlohmann::json(parsed[name].as<int64_t>());
    case run::ValueType::kCount: return nlohmann::json(parsed[name].as<uint64_t>());
    case run::ValueType::kNumber: return nlohmann::json(parsed[name].as<double>());
    default: return nlohmann::json(parsed[name].as<std::string>());
  }
}

}  // namespace dtbench::experiments
