#include "trainer/record/parameter_checksum.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include <torch/utils.h>

#include "comm/allgather_values.h"

namespace dtbench::trainer {

double parameterChecksum(const torch::nn::Module& model) {
  torch::NoGradGuard noGrad;
  double sum = 0;
  for (const auto& p : model.parameters()) sum += p.detach().to(torch::kDouble).sum().item<double>();
  return sum;
}

void checkParametersAgree(comm::Communicator& communicator, const torch::nn::Module& model, int64_t globalStep) {
  const double mine = parameterChecksum(model);
  const std::vector<double> all = comm::allgatherDoubles(communicator, mine);
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    const double theirs = all[static_cast<size_t>(r)];
    if (theirs != mine) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "--check-every: after step %lld the ranks hold different parameters (checksum %.17g on rank %d, "
                    "%.17g on rank %d); the gradient synchronization is broken",
                    static_cast<long long>(globalStep), mine, communicator.rank(), theirs, r);
      throw std::runtime_error(text);
    }
  }
}

}  // namespace dtbench::trainer
