#include "models/model_options.h"

#include <stdexcept>
#include <string>

namespace dtbench::models {

void checkModelOptions(const ModelOptions& options) {
  if (options.inputChannels < 1) {
    throw std::invalid_argument("model inputChannels must be at least 1, got " +
                                std::to_string(options.inputChannels));
  }
  if (options.numClasses < 2) {
    throw std::invalid_argument("model numClasses must be at least 2, got " +
                                std::to_string(options.numClasses));
  }
}

}  // namespace dtbench::models
