#pragma once
// The measured step the predict tests build by hand: one rank of a model named "hand" over gloo's ring
// under ssgd, batch 10, forward 20 ms, backward 40 ms, optimizer 10 ms (compute 70 ms), no segments,
// with the given parameters (model order: name, elements, bytes per element, ready at seconds into
// backward) and training samples. Each test changes what it is about.
#include <cstdint>
#include <utility>
#include <vector>

#include "experiments/predict/measured_step.h"

namespace dtbench::predict {

inline MeasuredStep handMeasuredStep(std::vector<MeasuredParameter> parameters, int64_t trainSamples = 1000) {
  MeasuredStep run;
  run.settings.model = "hand";
  run.settings.comm.connection.backend = comm::Backend::kGloo;
  run.settings.comm.topology = comm::Topology::parse("ring");
  run.settings.sync.kind = run::Sync::kSsgd;
  run.worldSize = 1;
  run.batchSize = 10;
  run.trainSamples = trainSamples;
  run.forwardS = 0.02;
  run.backwardS = 0.04;
  run.optimizerS = 0.01;
  run.computeS = 0.07;
  run.segmentBytes = 0;
  run.parameters = std::move(parameters);
  return run;
}

}  // namespace dtbench::predict
