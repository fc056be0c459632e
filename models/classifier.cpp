#include "models/classifier.h"

#include <stdexcept>

namespace dtbench::models {

ClassifierPtr cloneClassifier(const Classifier& model, const std::optional<c10::Device>& device) {
  // The copy's dynamic type is the model's own, which is a Classifier too: a cross-cast.
  ClassifierPtr copy = std::dynamic_pointer_cast<Classifier>(model.module().clone(device));
  if (!copy) throw std::logic_error("clone() of " + model.module().name() + " returned a module that is no Classifier");
  return copy;
}

}  // namespace dtbench::models
