#pragma once
// Store: the rendezvous key-value store the ranks meet through (c10d's Store).
//
//   tcp   c10d::TCPStore: rank 0 serves on MASTER_ADDR:MASTER_PORT, every rank connects.
//   file  c10d::FileStore on a shared filesystem (Slurm): use a fresh path per job attempt, since
//         the file is removed only when the last rank shuts down cleanly.
//   hash  c10d::HashStore: in-process only (the multi-rank test fixture).
// prefixed(p) is a view whose keys live under "p/" (c10d::PrefixStore): several groups, one store.
//
// Contract: get() and wait() block until the keys exist or the store's timeout passes (then throw
// c10::Error, which callers report as a rendezvous failure). Copies share the same store.

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace dtbench::comm {

class Store {
 public:
  static Store tcp(const std::string& host, int port, bool isServer, int worldSize, std::chrono::milliseconds timeout);
  static Store file(const std::string& path, int worldSize, std::chrono::milliseconds timeout);
  static Store hash(std::chrono::milliseconds timeout);

  Store prefixed(const std::string& prefix) const;

  void set(const std::string& key, const std::string& value);
  std::string get(const std::string& key);
  int64_t add(const std::string& key, int64_t delta);

  const c10::intrusive_ptr<c10d::Store>& c10dStore() const { return store_; }

 private:
  explicit Store(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}
  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace dtbench::comm
