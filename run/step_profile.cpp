#include "run/step_profile.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "run/json_values.h"

namespace dtbench::run {
namespace {

// The median of the finite values; none when there are none.
std::optional<double> median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty()) return std::nullopt;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

nlohmann::json profileNumberOrNull(std::optional<double> value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

}  // namespace

StepProfile::StepProfile(std::vector<ProfiledParameter> parameters, int64_t bufferElements)
    : parameters_(std::move(parameters)), bufferElements_(bufferElements) {}

void StepProfile::add(double backwardS, const std::vector<double>& readyS) {
  if (readyS.size() != parameters_.size())
    throw std::invalid_argument("StepProfile: " + std::to_string(readyS.size()) + " ready times for " +
                                std::to_string(parameters_.size()) + " parameters");
  if (!warmUp_) {
    warmUp_ = Sample{backwardS, readyS};
    return;
  }
  const int64_t index = counted_++;
  if (index % stride_ != 0) return;
  kept_.push_back(Sample{backwardS, readyS});
  if (kept_.size() < kMaxKeptSteps) return;
  // Keep steps 0, 2 stride, 4 stride, ...; the next one, kMaxKeptSteps x stride, is a multiple of
  // the new stride, since kMaxKeptSteps is even.
  size_t out = 1;  // kept_[0] stays where it is
  for (size_t k = 2; k < kept_.size(); k += 2) kept_[out++] = std::move(kept_[k]);
  kept_.resize(out);
  stride_ *= 2;
}

int64_t StepProfile::steps() const { return counted_ > 0 ? counted_ : (warmUp_ ? 1 : 0); }

nlohmann::json StepProfile::toJson(int rank) const {
  // The counted steps kept, or the warm-up when it is the only step.
  std::vector<Sample> warmUpOnly;
  if (kept_.empty() && warmUp_) warmUpOnly.push_back(*warmUp_);
  const std::vector<Sample>& samples = kept_.empty() ? warmUpOnly : kept_;
  std::vector<double> values;
  nlohmann::json parameters = nlohmann::json::array();
  for (size_t p = 0; p < parameters_.size(); ++p) {
    values.clear();
    for (const Sample& s : samples) values.push_back(s.readyS[p]);
    nlohmann::json parameter = {{"name", parameters_[p].name},
                                {"elements", parameters_[p].elements},
                                {"dtype", parameters_[p].dtype},
                                {"ready_s", profileNumberOrNull(median(values))}};
    if (!parameters_[p].shape.empty()) parameter["shape"] = parameters_[p].shape;  // unknown: left out
    parameters.push_back(std::move(parameter));
  }
  values.clear();
  for (const Sample& s : samples) values.push_back(s.backwardS);
  return {{"rank", rank},
          {"steps", steps()},
          {"backward_s", profileNumberOrNull(median(values))},
          {"buffer_elements", bufferElements_},
          {"parameters", parameters}};
}

ProfiledStep readStepProfile(const nlohmann::json& json) {
  std::vector<std::string> problems;
  ProfiledStep step;
  const JsonFields fields(json, "", problems);
  fields.read("steps", [&](const nlohmann::json& v) { step.steps = wholeValue(v); });
  fields.read("backward_s", [&](const nlohmann::json& v) { step.backwardS = numberValue(v); }, true);
  fields.read("buffer_elements", [&](const nlohmann::json& v) { step.bufferElements = wholeValue(v); });
  fields.read(
      "parameters",
      [&](const nlohmann::json& list) {
        if (!list.is_array()) wrongValue("a list", list);
        for (size_t i = 0; i < list.size(); ++i) {
          const JsonFields parameter(list[i], "parameters[" + std::to_string(i) + "].", problems);
          ProfiledParameter p;
          std::optional<double> ready;
          parameter.read("name", [&](const nlohmann::json& v) { p.name = textValue(v); }, true);
          parameter.read("elements", [&](const nlohmann::json& v) { p.elements = wholeValue(v); }, true);
          parameter.read("dtype", [&](const nlohmann::json& v) { p.dtype = textValue(v); }, true);
          parameter.read("shape", [&](const nlohmann::json& v) {
            p.shape = listValue<int64_t>(v, wholeValue);
            int64_t product = 1;
            for (int64_t d : p.shape) product *= d;
            if (product != p.elements) wrongValue("the sizes whose product is its elements", v);
          });
          parameter.read(
              "ready_s", [&](const nlohmann::json& v) { ready = v.is_null() ? std::nullopt : std::optional(numberValue(v)); },
              true);
          step.parameters.push_back(std::move(p));
          step.readyS.push_back(ready);
        }
      },
      true);
  if (!problems.empty()) throw std::invalid_argument(problems.front());
  return step;
}

}  // namespace dtbench::run
