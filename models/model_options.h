#pragma once
// checkModelOptions: the one check of ModelOptions, made by makeModel and by every model's
// constructor, so a model built directly is held to the same rules.

#include "models/classifier.h"

namespace dtbench::models {

// Throws std::invalid_argument naming the bad value when `options` cannot describe a model:
// inputChannels < 1 or numClasses < 2.
void checkModelOptions(const ModelOptions& options);

}  // namespace dtbench::models
