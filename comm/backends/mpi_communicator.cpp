#include "comm/backends/mpi_communicator.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include "comm/point_to_point.h"
#include "common/exit_deadline.h"

namespace dtbench::comm {
namespace {

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

// Throws CommError with MPI's own error string when an MPI call fails.
void mpiCheck(int code, const std::string& call) {
  if (code != MPI_SUCCESS) throw CommError(call + " failed: " + mpiErrorString(code));
}

int checkedCount(int64_t count, const char* operation) {
  if (count > INT_MAX)
    throw std::invalid_argument(std::string("mpi ") + operation + ": " + std::to_string(count) +
                                " exceeds MPI's int count; split the tensor");
  return static_cast<int>(count);
}

}  // namespace

struct MpiState {
  std::mutex mutex;
  MPI_Comm comm = MPI_COMM_NULL;
  bool initializedHere = false;
  std::chrono::milliseconds timeout{0};
  // A collective missed its deadline: MPI cannot cancel it, so the process may not finalize
  // (that would wait for the missing peer); the destructor aborts the job instead.
  std::atomic<bool> failed{false};
  std::string failure;  // the message, set under `mutex` with `failed`
  // MPI has no 16-bit floating-point sum: Note [16-bit sums over MPI].
  MPI_Op halfSum = MPI_OP_NULL;
  MPI_Op bfloat16Sum = MPI_OP_NULL;

  ~MpiState() {
    if (failed) {
      std::fprintf(stderr, "dtbench: error: %s (MPI_Abort: MPI cannot release the other ranks otherwise)\n",
                   failure.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (halfSum != MPI_OP_NULL) MPI_Op_free(&halfSum);
    if (bfloat16Sum != MPI_OP_NULL) MPI_Op_free(&bfloat16Sum);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (initializedHere && !finalized) MPI_Finalize();
  }
};

namespace {

// Note [16-bit sums over MPI]: the MPI standard has no float16 or bfloat16 type (Open MPI 4's
// MPI_Allreduce takes neither), so a 16-bit buffer travels as MPI_UINT16_T under a user-defined sum
// that adds each pair of elements in float32 and rounds the result back to 16 bits: the rounding
// dtbench's own reduction (comm/schedule_executor.h) and Gloo's make.
template <typename T>
void sum16(void* in, void* inout, int* length, MPI_Datatype* /*type*/) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = static_cast<T>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

class MpiWork final : public Work {
 public:
  MpiWork(std::shared_ptr<MpiState> impl, MPI_Request request, std::string operation, int self,
          int peer, at::Tensor keepAlive, int64_t expectedBytes)
      : impl_(std::move(impl)), request_(request), operation_(std::move(operation)), self_(self), peer_(peer),
        keepAlive_(std::move(keepAlive)), expectedBytes_(expectedBytes), deadline_(Deadline::after(impl_->timeout)) {}

  void wait() override {
    // Note [Polling MPI]: MPI progresses only inside MPI calls, so wait() polls MPI_Test. The first
    // kSpin of a wait poll back to back: a small all-reduce completes within microseconds, and
    // yielding between polls from the start cost time at 4 KB (2 ranks: 7.9 -> 6.1 us per
    // all-reduce without it, docs/benchmarks.md). After that each poll yields the core, so that
    // ranks sharing cores with each other or with the training thread make progress.
    const auto spinUntil = std::chrono::steady_clock::now() + kSpin;
    while (!test()) {
      if (std::chrono::steady_clock::now() < spinUntil) continue;
      if (deadline_.passed()) {
        // The caller records the failure (the run directory says "failed"); destroying the
        // communicator then aborts the job, since MPI cannot cancel the operation.
        const std::string message = who() + " did not complete within " + deadline_.describe() +
                                    " (a rank is stalled or gone)" + (peer_ < 0 ? kLateRankUnknown : "") +
                                    "; MPI cannot cancel it, so the job is aborted";
        {
          std::lock_guard<std::mutex> lock(impl_->mutex);
          impl_->failure = message;
          impl_->failed = true;
        }
        throw CommError(message);
      }
      std::this_thread::yield();
    }
  }

  bool isCompleted() override { return test(); }

 private:
  static constexpr std::chrono::microseconds kSpin{50};

  std::string who() const {
    std::string text = "mpi " + operation_ + " on rank " + std::to_string(self_);
    if (peer_ >= 0) text += (operation_ == "recv" ? " from rank " : " to rank ") + std::to_string(peer_);
    return text;
  }

  bool test() {
    if (done_) return true;
    int flag = 0;
    MPI_Status status;
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      mpiCheck(MPI_Test(&request_, &flag, &status), who() + ": MPI_Test");
    }
    if (!flag) return false;
    done_ = true;
    if (expectedBytes_ >= 0) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      if (count != expectedBytes_)
        throw CommError(who() + ": expected " + std::to_string(expectedBytes_) + " bytes, got " +
                        std::to_string(count) + " (ranks disagree on the tensor's size)");
    }
    return true;
  }

  std::shared_ptr<MpiState> impl_;
  MPI_Request request_;
  std::string operation_;
  int self_, peer_;
  at::Tensor keepAlive_;
  int64_t expectedBytes_;  // recv only; -1 otherwise
  Deadline deadline_;
  bool done_ = false;
};

#ifdef OMPI_MAJOR_VERSION
// The number of ranks the launcher started, from its environment (Open MPI's mpirun, then Slurm's
// srun), or 0 when none says.
int launcherWorldSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "PMI_SIZE"})
    if (const char* value = std::getenv(name); value && *value) {
      const int size = std::atoi(value);
      if (size > 0) return size;
    }
  return 0;
}
#endif

// What a rank says when MPI's start-up did not return within --timeout (Note [A rank that dies while
// MPI starts]).
std::string startupStall(const char* call, std::chrono::milliseconds timeout) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(timeout.count()) / 1000);
  return std::string("mpi: ") + call + " did not return within " + seconds +
         " s (--timeout): a rank died or never started while the ranks were meeting; MPI cannot cancel it, so "
         "this rank exits (check every rank's log, and that every rank was launched)";
}

}  // namespace

MpiCommunicator::MpiCommunicator(std::chrono::milliseconds timeout) : impl_(std::make_shared<MpiState>()) {
  impl_->timeout = timeout;
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (!initialized) {
#ifdef OMPI_MAJOR_VERSION
    // Note [Open MPI's non-blocking all-reduce]: libnbc's own choice for MPI_Iallreduce is the
    // binomial tree for fewer than 4 ranks, small messages or in-place buffers: reduce to a root,
    // then broadcast, twice the data time of a ring. Measured with 2 ranks here (2026-11-21) it
    // took 2.0x (1 MB) to 2.6x (16 MB) as long as a blocking MPI_Allreduce; the reduce-scatter +
    // all-gather algorithm (3, "rabenseifner") matched MPI_Allreduce from 64 KB to 16 MB and was
    // faster below. dtbench asks for it unless the user's environment chose an algorithm already
    // (it falls back to the binomial tree where it does not apply). Read at MPI_Init.
    // Across the emulated cluster's nodes (docs/benchmarks-history.md, "The link bound", 2026-11-25) that
    // algorithm reached 0.87-0.94 of the link bound at 4 nodes but only 0.43 at 3: it needs a power of
    // two. The ring (1) reached 0.86-0.94 at 3 nodes, so a world size that is not a power of two gets
    // the ring. The size is the launcher's (mpirun, srun), read before MPI_Init.
    const int worldSize = launcherWorldSize();
    const bool powerOfTwo = worldSize > 0 && (worldSize & (worldSize - 1)) == 0;
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", worldSize > 0 && !powerOfTwo ? "1" : "3", /*overwrite=*/0);
    // Note [Open MPI's eager limit between nodes]: over its TCP transport Open MPI sends a message
    // of more than btl_tcp_eager_limit (64 KiB) by rendezvous: the receiver answers the sender's
    // header before the data flows, and that answer queues behind whatever the receiver is itself
    // sending on the same connection. Two nodes sending each other MiB-sized messages then take
    // turns (a ring or clique over 2 nodes reached 0.50 of the link bound at 1 Gbit/s), and
    // several outstanding rendezvous to one peer share the link and finish together, which undoes
    // a pipeline of segments (a tree or star reached 0.50). The executor's segments across hosts
    // (crossHostSegmentBytes, comm/topology/registry.h: 16 KiB to 1 MiB by the link's rate and
    // queue, 128 KiB when the rate is unknown, more for a chunk that would be cut into over
    // kMaxSegments) therefore go eagerly, in the order they were posted: a 2 MiB limit, measured at
    // 0.92-0.97 of the bound for every topology over 2 nodes (docs/benchmarks-history.md, "The link bound:
    // why trees and stars ran at half of it"). Shared memory within a node has limits of its own,
    // untouched. A user's own setting wins.
    const std::string eagerLimit = std::to_string(backendRow(Backend::kMpi).eagerBytesBetweenHosts);
    setenv("OMPI_MCA_btl_tcp_eager_limit", eagerLimit.c_str(), /*overwrite=*/0);
    setenv("OMPI_MCA_btl_tcp_max_send_size", eagerLimit.c_str(), /*overwrite=*/0);
#endif
    {
      // Note [A rank that dies while MPI starts]: Open MPI's start-up exchange waits for every rank;
      // when one died in it (measured: a rank killed 0.3 s after start), the others wait there
      // forever, out of reach of the Work deadlines below. MPI cannot cancel MPI_Init_thread, so the
      // process ends at --timeout with a message instead.
      const common::ExitDeadline deadline(timeout, startupStall("MPI_Init_thread", timeout));
      mpiCheck(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    }
    impl_->initializedHere = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw CommError("this MPI provides thread level " + std::to_string(provided) +
                    ", dtbench needs MPI_THREAD_SERIALIZED; use an MPI built with thread support");
  {
    const common::ExitDeadline deadline(timeout, startupStall("MPI_Comm_dup", timeout));  // collective too
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm), "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN);
  mpiCheck(MPI_Op_create(&sum16<c10::Half>, /*commute=*/1, &impl_->halfSum), "MPI_Op_create");
  mpiCheck(MPI_Op_create(&sum16<c10::BFloat16>, /*commute=*/1, &impl_->bfloat16Sum), "MPI_Op_create");
  MPI_Comm_rank(impl_->comm, &rank_);
  MPI_Comm_size(impl_->comm, &size_);
}

MpiCommunicator::~MpiCommunicator() = default;

void MpiCommunicator::abandon(const std::string& reason) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->failed) return;  // a missed deadline's message says more
  impl_->failure = reason;
  impl_->failed = true;
}

WorkPtr MpiCommunicator::send(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size_, "send");
  MPI_Request request;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  mpiCheck(MPI_Isend(tensor.data_ptr(), checkedCount(tensor.nbytes(), "send"), MPI_BYTE, peer, tag, impl_->comm,
                     &request),
           "MPI_Isend to rank " + std::to_string(peer));
  return std::make_shared<MpiWork>(impl_, request, "send", rank_, peer, tensor, -1);
}

WorkPtr MpiCommunicator::recv(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size_, "recv");
  MPI_Request request;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  mpiCheck(MPI_Irecv(tensor.data_ptr(), checkedCount(tensor.nbytes(), "recv"), MPI_BYTE, peer, tag, impl_->comm,
                     &request),
           "MPI_Irecv from rank " + std::to_string(peer));
  return std::make_shared<MpiWork>(impl_, request, "recv", rank_, peer, tensor, static_cast<int64_t>(tensor.nbytes()));
}

WorkPtr MpiCommunicator::allreduce(const at::Tensor& tensor, ReduceOp op) {
  checkNativeAllreduce(tensor, Backend::kMpi);
  if (tensor.numel() == 0) return completedWork();
  MPI_Request request;
  const at::ScalarType type = tensor.scalar_type();
  const bool sixteen = type == at::kHalf || type == at::kBFloat16;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    mpiCheck(MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), checkedCount(tensor.numel(), "allreduce"),
                            sixteen ? MPI_UINT16_T : MPI_FLOAT,
                            type == at::kHalf ? impl_->halfSum : type == at::kBFloat16 ? impl_->bfloat16Sum : MPI_SUM,
                            impl_->comm, &request),
             "MPI_Iallreduce");
  }
  WorkPtr sum = std::make_shared<MpiWork>(impl_, request, "allreduce", rank_, -1, tensor, -1);
  return op == ReduceOp::kAverage ? averageAfter(std::move(sum), tensor, size_) : sum;
}

WorkPtr MpiCommunicator::broadcast(const at::Tensor& tensor, int root) {
  MPI_Request request;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  mpiCheck(MPI_Ibcast(tensor.data_ptr(), checkedCount(tensor.nbytes(), "broadcast"), MPI_BYTE, root, impl_->comm,
                      &request),
           "MPI_Ibcast");
  return std::make_shared<MpiWork>(impl_, request, "broadcast", rank_, -1, tensor, -1);
}

WorkPtr MpiCommunicator::allgather(const at::Tensor& output, const at::Tensor& input) {
  if (output.numel() != input.numel() * size_ || !output.is_contiguous() || !input.is_contiguous() ||
      output.scalar_type() != input.scalar_type())
    throw std::invalid_argument("allgather: output must be contiguous, of the input's type, with size() * "
                                "input.numel() elements");
  MPI_Request request;
  const int bytes = checkedCount(input.nbytes(), "allgather");
  std::lock_guard<std::mutex> lock(impl_->mutex);
  mpiCheck(MPI_Iallgather(input.data_ptr(), bytes, MPI_BYTE, output.data_ptr(), bytes, MPI_BYTE, impl_->comm,
                          &request),
           "MPI_Iallgather");
  return std::make_shared<MpiWork>(impl_, request, "allgather", rank_, -1, output, -1);
}

WorkPtr MpiCommunicator::barrier() {
  MPI_Request request;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  mpiCheck(MPI_Ibarrier(impl_->comm, &request), "MPI_Ibarrier");
  return std::make_shared<MpiWork>(impl_, request, "barrier", rank_, -1, at::Tensor(), -1);
}

}  // namespace dtbench::comm
