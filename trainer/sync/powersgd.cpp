#include "trainer/sync/powersgd.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/linalg_qr.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <c10/util/Exception.h>

#include "comm/compressed_sizes.h"

namespace dtbench::trainer {

uint64_t powerSgdQSeed(uint64_t seed, size_t bucket) { return seed * 1000003u + bucket + 1; }

void orthogonalizeColumns(const at::Tensor& matrix) {
  const int64_t r = matrix.size(1);
  if (r > 2) {
    matrix.copy_(std::get<0>(at::linalg_qr(matrix)));
    return;
  }
  for (int64_t i = 0; i < r; ++i) {
    at::Tensor column = matrix.narrow(1, i, 1);
    const at::Tensor norm = column.norm();
    column.div_(at::where(norm > 0, norm, at::ones_like(norm)));
    if (i + 1 < r) {
      at::Tensor rest = matrix.narrow(1, i + 1, r - i - 1);
      rest.sub_((column * rest).sum(0, /*keepdim=*/true) * column);
    }
  }
}

namespace {

class PowerSgd final : public BucketCompression {
 public:
  PowerSgd(const CompressionOptions& options, comm::Communicator& communicator, comm::TopologyAllreduce& allreduce,
           std::vector<BucketContents> buckets, std::function<void()> deviceSync)
      : BucketCompression(options, communicator, allreduce, std::move(buckets), std::move(deviceSync)) {
    for (const BucketContents& layout : buckets_) {
      Plan plan;
      for (size_t slot = 0; slot < layout.shapes.size(); ++slot) {
        const comm::PowerSgdMatrix m = comm::powerSgdMatrix(layout.shapes[slot], options.rank);
        if (!m.compressed) {
          plan.uncompressed.push_back(slot);
          plan.uncompressedElements += elementsOf(layout.shapes[slot]);
          continue;
        }
        plan.matrices.push_back({slot, m, plan.pElements, plan.qElements});
        plan.pElements += m.rows * m.rank;
        plan.qElements += m.cols * m.rank;
      }
      plans_.push_back(std::move(plan));
    }
  }

  void average(size_t bucket, const at::Tensor& flat, int64_t globalStep) override {
    if (globalStep <= options_.start) {
      averageUncompressed(bucket, flat);
      return;
    }
    const BucketContents& layout = buckets_.at(bucket);
    Plan& plan = plans_.at(bucket);
    const int64_t world = communicator_.size();
    {
      const CodecTimer timer(*this);
      allocate(plan, layout, flat);
      flat.narrow(0, 0, layout.gradients).add_(plan.residual);
      packUncompressed(plan, layout, flat);
      if (plan.warm) {
        for (const Matrix& m : plan.matrices) orthogonalizeColumns(qOf(plan, m));
      } else {
        drawFirstQ(bucket, plan);
      }
      for (const Matrix& m : plan.matrices) {
        at::Tensor p = pOf(plan, m);
        at::mm_out(p, gradientOf(layout, flat, m), qOf(plan, m));
      }
    }
    sum(plan.packed);
    {
      const CodecTimer timer(*this);
      plan.packed.narrow(0, 0, plan.uncompressedElements).div_(world);
      unpackUncompressed(plan, layout, flat);
    }
    sum(plan.p);
    {
      const CodecTimer timer(*this);
      for (const Matrix& m : plan.matrices) {
        const at::Tensor p = pOf(plan, m);
        orthogonalizeColumns(p);
        at::Tensor q = qOf(plan, m);
        at::mm_out(q, gradientOf(layout, flat, m).t(), p);
      }
    }
    sum(plan.q);
    const CodecTimer timer(*this);
    plan.q.div_(world);
    for (const Matrix& m : plan.matrices) {
      const at::Tensor gradient = gradientOf(layout, flat, m);
      const at::Tensor approximation = at::mm(pOf(plan, m), qOf(plan, m).t());
      at::Tensor residual = residualOf(plan, layout, m);
      at::sub_out(residual, gradient, approximation);
      gradient.copy_(approximation);
    }
    plan.warm = true;
  }

  std::string saveState() const override {
    torch::serialize::OutputArchive archive;
    bool any = false;
    for (size_t b = 0; b < plans_.size(); ++b) {
      if (!plans_[b].warm) continue;
      archive.write("bucket" + std::to_string(b) + ".q", plans_[b].q.cpu());
      archive.write("bucket" + std::to_string(b) + ".residual", plans_[b].residual.cpu());
      any = true;
    }
    if (!any) return {};
    // Whose state it is: a resume checks it against its own rank and rank R (files swapped between ranks,
    // or from a run of another --compress-rank, would otherwise resume silently to another result).
    archive.write("owner.rank", at::scalar_tensor(communicator_.rank(), at::kLong));
    archive.write("owner.compress_rank", at::scalar_tensor(options_.rank, at::kLong));
    std::ostringstream out(std::ios::out | std::ios::binary);
    archive.save_to(out);
    return out.str();
  }

  void loadState(const std::string& bytes, const std::string& source) override {
    for (Plan& plan : plans_) {
      plan.warm = false;
      plan.p = at::Tensor();  // made again at the next step, from what is loaded here
      plan.loadedQ = plan.loadedResidual = at::Tensor();
    }
    if (bytes.empty()) return;
    torch::serialize::InputArchive archive;
    try {
      archive.load_from(bytes.data(), bytes.size(), c10::Device(c10::kCPU));
    } catch (const std::exception& e) {
      // LibTorch's own message, without its C++ stack frames.
      const auto* c10Error = dynamic_cast<const c10::Error*>(&e);
      throw std::runtime_error(source + " is not PowerSGD's state: it does not read as a LibTorch archive (" +
                               (c10Error != nullptr ? c10Error->what_without_backtrace() : e.what()) +
                               "); resume from an intact checkpoint, or start the run again");
    }
    // Checkpoints written before the owner was recorded carry none: nothing to check.
    at::Tensor owner;
    if (archive.try_read("owner.rank", owner) && owner.item<int64_t>() != communicator_.rank())
      throw std::runtime_error(source + " holds rank " + std::to_string(owner.item<int64_t>()) +
                               "'s PowerSGD state, not rank " + std::to_string(communicator_.rank()) +
                               "'s: the checkpoint's sync_rank files were moved or swapped");
    at::Tensor compressRank;
    if (archive.try_read("owner.compress_rank", compressRank) && compressRank.item<int64_t>() != options_.rank)
      throw std::runtime_error(source + " holds PowerSGD state of rank " + std::to_string(compressRank.item<int64_t>()) +
                               " factors, and this run's --compress-rank is " + std::to_string(options_.rank));
    for (size_t b = 0; b < plans_.size(); ++b) {
      Plan& plan = plans_[b];
      at::Tensor q;
      at::Tensor residual;
      const std::string key = "bucket" + std::to_string(b);
      const bool hasQ = archive.try_read(key + ".q", q);
      const bool hasResidual = archive.try_read(key + ".residual", residual);
      if (hasQ != hasResidual)
        throw std::runtime_error(source + " holds only one of bucket " + std::to_string(b) + "'s Q and residual");
      if (!hasQ) continue;
      if (q.scalar_type() != at::kFloat || q.numel() != plan.qElements || residual.scalar_type() != at::kFloat ||
          residual.numel() != buckets_[b].gradients)
        throw std::runtime_error(source + ": bucket " + std::to_string(b) + "'s PowerSGD state holds " +
                                 std::to_string(q.numel()) + " Q and " + std::to_string(residual.numel()) +
                                 " residual elements where this run's --compress-rank and model need " +
                                 std::to_string(plan.qElements) + " and " + std::to_string(buckets_[b].gradients));
      plan.loadedQ = q.reshape({-1});
      plan.loadedResidual = residual.reshape({-1});
      plan.warm = true;
    }
  }

 private:
  struct Matrix {
    size_t slot;  // index into the bucket's layout
    comm::PowerSgdMatrix shape;
    int64_t pOffset;
    int64_t qOffset;
  };
  struct Plan {
    std::vector<Matrix> matrices;     // the compressed gradients
    std::vector<size_t> uncompressed;  // slots sent whole
    int64_t uncompressedElements = 0;
    int64_t pElements = 0;
    int64_t qElements = 0;
    // Made at the bucket's first compressed step, where the bucket's buffer is.
    at::Tensor packed;    // the uncompressed gradients, then the stop flag
    at::Tensor p;
    at::Tensor q;
    at::Tensor residual;  // one element per gradient element of the bucket
    bool warm = false;    // q holds the last step's Q (and residual its residual)
    at::Tensor loadedQ;   // from a checkpoint, until allocate() puts them in place
    at::Tensor loadedResidual;
  };

  static int64_t elementsOf(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  void allocate(Plan& plan, const BucketContents& layout, const at::Tensor& flat) {
    if (plan.p.defined()) return;
    const at::TensorOptions options = flat.options().pinned_memory(false);
    plan.packed = at::empty({plan.uncompressedElements + (layout.carriesFlag ? 1 : 0)}, options);
    plan.p = at::zeros({plan.pElements}, options);
    plan.q = at::zeros({plan.qElements}, options);
    plan.residual = at::zeros({layout.gradients}, options);
    if (plan.loadedQ.defined()) {
      plan.q.copy_(plan.loadedQ);
      plan.residual.copy_(plan.loadedResidual);
      plan.loadedQ = plan.loadedResidual = at::Tensor();
    }
  }

  static at::Tensor gradientOf(const BucketContents& layout, const at::Tensor& flat, const Matrix& m) {
    return flat.narrow(0, layout.offsets[m.slot], m.shape.rows * m.shape.cols).view({m.shape.rows, m.shape.cols});
  }
  static at::Tensor residualOf(const Plan& plan, const BucketContents& layout, const Matrix& m) {
    return plan.residual.narrow(0, layout.offsets[m.slot], m.shape.rows * m.shape.cols)
        .view({m.shape.rows, m.shape.cols});
  }
  static at::Tensor pOf(const Plan& plan, const Matrix& m) {
    return plan.p.narrow(0, m.pOffset, m.shape.rows * m.shape.rank).view({m.shape.rows, m.shape.rank});
  }
  static at::Tensor qOf(const Plan& plan, const Matrix& m) {
    return plan.q.narrow(0, m.qOffset, m.shape.cols * m.shape.rank).view({m.shape.cols, m.shape.rank});
  }

  void packUncompressed(Plan& plan, const BucketContents& layout, const at::Tensor& flat) const {
    int64_t offset = 0;
    for (size_t slot : plan.uncompressed) {
      const int64_t n = elementsOf(layout.shapes[slot]);
      plan.packed.narrow(0, offset, n).copy_(flat.narrow(0, layout.offsets[slot], n));
      offset += n;
    }
    if (layout.carriesFlag) plan.packed.narrow(0, offset, 1).copy_(flat.narrow(0, layout.gradients, 1));
  }

  void unpackUncompressed(const Plan& plan, const BucketContents& layout, const at::Tensor& flat) const {
    int64_t offset = 0;
    for (size_t slot : plan.uncompressed) {
      const int64_t n = elementsOf(layout.shapes[slot]);
      flat.narrow(0, layout.offsets[slot], n).copy_(plan.packed.narrow(0, offset, n));
      offset += n;
    }
    if (layout.carriesFlag) flat.narrow(0, layout.gradients, 1).copy_(plan.packed.narrow(0, offset, 1));
  }

  void drawFirstQ(size_t bucket, Plan& plan) const {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(powerSgdQSeed(options_.seed, bucket));
    for (const Matrix& m : plan.matrices) {
      const at::Tensor draw = at::randn({m.shape.cols, m.shape.rank}, generator, at::TensorOptions(at::kFloat));
      const at::Tensor q = qOf(plan, m);
      q.copy_(draw);
      orthogonalizeColumns(q);
    }
  }

  std::vector<Plan> plans_;
};

}  // namespace

std::unique_ptr<BucketCompression> makePowerSgd(const CompressionOptions& options, comm::Communicator& communicator,
                                                comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                                                std::function<void()> deviceSync) {
  return std::make_unique<PowerSgd>(options, communicator, allreduce, std::move(buckets), std::move(deviceSync));
}

}  // namespace dtbench::trainer
