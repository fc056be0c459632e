#pragma once
// Training-time augmentation and normalization of whole batches (docs/design.md, "Randomness
// contract").
//
// Each sample's augmentation is decided on the host by sampleAugment from
// counterHash(seed, epoch, dataset index, stream): a sample gets the same crop and flip whatever
// batch it lands in, whatever the batch size, rank count, worker count, LibTorch version or
// device. augmentBatch then applies the decided parameters to a whole batch with a few tensor
// operations on the images' own device (a CPU batch on the CPU, a CUDA batch with
// --data-on-device on the GPU).
//
// The augmentation is torchvision's RandomCrop(32, padding=4) + RandomHorizontalFlip() followed
// by ToTensor() + Normalize(mean, std):
//   1. zero-pad the uint8 image by `padding` on every side (zero in pixel space, so a padded pixel
//      normalizes to -mean[c] / std[c]);
//   2. take the HxW crop whose top-left corner is (dy, dx) in the padded image, dy, dx in
//      [0, 2 * padding]; (padding, padding) is the original image;
//   3. reverse the columns when flip;
//   4. normalize: (pixel / 255 - mean[c]) / std[c] in float32.

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace dtbench::data {

struct SampleAugment {
  int32_t dy;  // crop row offset in the padded image, in [0, 2 * padding]
  int32_t dx;  // crop column offset in the padded image, in [0, 2 * padding]
  bool flip;   // reverse the columns of the crop
};

// The augmentation of dataset sample `index` in `epoch`: dy and dx uniform in [0, 2 * padding]
// (streams kStreamCropY, kStreamCropX), flip with probability 1/2 when `flip` (kStreamFlip),
// never otherwise. padding >= 0.
SampleAugment sampleAugment(uint64_t seed, int64_t epoch, int64_t index, int64_t padding,
                            bool flip);

// uint8 [B, C, H, W] -> float32 [B, C, H, W], (x / 255 - mean[c]) / std[c] computed in float32
// in that order (as ToTensor + Normalize do), on the images' device. mean and std have C entries.
at::Tensor normalize(const at::Tensor& images, const std::vector<double>& mean,
                     const std::vector<double>& std);

// uint8 [B, C, H, W] -> float32 [B, C, H, W]: pad, crop at (params[b].dy, params[b].dx), flip,
// normalize, as above; params has B entries. Works on the images' device with host-computed
// params; no per-image loop of tensor calls.
at::Tensor augmentBatch(const at::Tensor& images, const std::vector<SampleAugment>& params,
                        int64_t padding, const std::vector<double>& mean,
                        const std::vector<double>& std);

}  // namespace dtbench::data
