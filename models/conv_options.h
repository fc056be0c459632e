#pragma once
// convNoBias: the options of a square, bias-free convolution, the kind every model of the zoo
// except VGG and LeNet uses throughout (kuangliu's `nn.Conv2d(..., bias=False)`).

#include <cstdint>

#include <torch/nn/options/conv.h>

namespace dtbench::models {

inline torch::nn::Conv2dOptions convNoBias(int64_t inChannels, int64_t outChannels,
                                           int64_t kernel, int64_t stride = 1,
                                           int64_t padding = 0) {
  return torch::nn::Conv2dOptions(inChannels, outChannels, kernel)
      .stride(stride)
      .padding(padding)
      .bias(false);
}

}  // namespace dtbench::models
