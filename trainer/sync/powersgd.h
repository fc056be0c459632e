#pragma once
// PowerSGD: --compress powersgd (Vogels, Karimireddy and Jaggi, "PowerSGD: Practical Low-Rank Gradient
// Compression for Distributed Optimization", NeurIPS 2019), the way PyTorch's powerSGD_hook does it with
// error feedback and warm start, over any backend and topology (docs/design.md, "Gradient compression").
//
// Steps 1..start of the run are averaged uncompressed (PyTorch's start_powerSGD_iter). From then on, per
// bucket:
//  1. error feedback: the residual the bucket's last compressed step left is added to its gradients;
//  2. each gradient, viewed as a matrix M of n rows (its first dimension) and m columns (the rest), with
//     r = min(n, m, R), is compressed where (n + m)·r·2 < n·m (PyTorch's min_compression_rate 2:
//     powerSgdCompresses); every other gradient (1-D ones, small matrices) and the stop flag are packed
//     into one float32 buffer;
//  3. warm start: each Q (m × r) is the bucket's Q of the last step, orthogonalized; at the bucket's first
//     compressed step it is drawn from a standard normal by a CPU generator seeded with
//     powerSgdQSeed(seed, bucket), matrix after matrix in bucket order, and orthogonalized: every rank
//     starts from the same Q, and a Python reference can draw it again (torch.Generator().manual_seed);
//  4. P = M·Q; the packed buffer is all-reduced and averaged, then every P of the bucket in one all-reduce;
//  5. each P is orthogonalized (Gram-Schmidt for r <= 2, Householder QR above: orthogonalizeColumns), each
//     Q = Mᵀ·P, and every Q of the bucket is all-reduced in one all-reduce and divided by the world size;
//  6. M is replaced by P·Qᵀ, and the residual M − P·Qᵀ (what the factors did not carry) is kept for the
//     next step. The uncompressed gradients are sent whole: their residual is 0. (PyTorch keeps their
//     local value minus the average instead, whose sum over the ranks is 0: the next step's averages are
//     the same up to rounding.)
// So a compressed bucket makes three all-reduces (two without uncompressed gradients or flag), of
// n·r + m·r elements per compressed matrix. The residuals and Qs travel through checkpoints
// (saveState/loadState).

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "trainer/sync/bucket_compression.h"

namespace dtbench::trainer {

// The seed of bucket `bucket`'s first Q: (seed × 1000003 + bucket + 1) mod 2^64.
uint64_t powerSgdQSeed(uint64_t seed, size_t bucket);

// Orthonormalizes the columns of an n × r matrix (r <= n) in place, as PyTorch's powerSGD_hook does:
// Gram-Schmidt for r <= 2, Householder QR (at::linalg_qr) above. A column of zeros stays zero.
void orthogonalizeColumns(const at::Tensor& matrix);

std::unique_ptr<BucketCompression> makePowerSgd(const CompressionOptions& options, comm::Communicator& communicator,
                                                comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                                                std::function<void()> deviceSync);

}  // namespace dtbench::trainer
