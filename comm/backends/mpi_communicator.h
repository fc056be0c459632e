#pragma once
// MpiCommunicator: the `mpi` backend, Open MPI's C API directly (Debian's LibTorch has no
// ProcessGroupMPI). Built only when DTBENCH_HAVE_MPI; comm/backends/backend.h says "this build has no MPI"
// otherwise.
//
// MPI_Init_thread is called by the constructor (only when this backend is chosen) with
// MPI_THREAD_SERIALIZED: dtbench may issue and wait from more than one thread, never at once (every
// MPI call here holds one mutex). MPI_Comm_rank/size are authoritative. Operations are the
// non-blocking ones (MPI_Isend/Irecv, MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Ibarrier);
// Open MPI has no progress thread, so they advance only inside MPI calls: wait() polls MPI_Test.
// Native all-reduce takes float32 only (no 16-bit float MPI types: float16 and bfloat16 are
// rejected by name; point-to-point topologies carry them as bytes).
//
// Failures: MPI cannot cancel a collective or survive a failed peer. When a wait passes its
// deadline, wait() throws CommError naming the operation, the peer (for send/recv) and the
// deadline, so the caller can record the failure (the trainer's run directory says "failed"); the
// communicator is then marked failed and its destruction calls MPI_Abort instead of MPI_Finalize
// (docs/design.md, "Signals, failures and resume"): the one place dtbench ends the process from inside, because nothing else
// can release the other ranks. abandon() marks it failed the same way when this rank stops on any
// other error (rank 0 refusing an --out that holds a run, say), so that the others are released at
// once and the reason is printed before the abort. Errors MPI returns become CommError with MPI's
// string. Otherwise the destructor calls MPI_Finalize when the constructor initialized MPI.

#include <chrono>
#include <memory>
#include <string>

#include "comm/backends/backend.h"
#include "comm/communicator.h"
#include "comm/work.h"

namespace dtbench::comm {

struct MpiState;  // the MPI communicator and its lock, shared with outstanding Work

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(std::chrono::milliseconds timeout);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Backend backend() const override { return Backend::kMpi; }
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(const at::Tensor& tensor, int root) override;
  WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) override;
  WorkPtr barrier() override;
  // Marks the communicator failed with `reason`: its destruction prints it and calls MPI_Abort.
  void abandon(const std::string& reason) override;

 private:
  std::shared_ptr<MpiState> impl_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace dtbench::comm
