#include "comm/store.h"

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <vector>

#include <c10/util/Exception.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace dtbench::comm {

Store Store::tcp(const std::string& host, int port, bool isServer, int worldSize, std::chrono::milliseconds timeout) {
  if (host.empty())
    throw std::invalid_argument("the gloo backend needs the rendezvous address: set MASTER_ADDR (or --master-addr)");
  if (port <= 0 || port > 65535)
    throw std::invalid_argument("the rendezvous port must be in 1..65535 (MASTER_PORT or --master-port), got " +
                                std::to_string(port));
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = isServer;
  options.numWorkers = static_cast<std::size_t>(worldSize);
  options.waitWorkers = true;
  options.timeout = timeout;
  try {
    return Store(c10::make_intrusive<c10d::TCPStore>(host, options));
  } catch (const std::exception& e) {
    const std::string what = dynamic_cast<const c10::Error*>(&e) ? static_cast<const c10::Error&>(e).what_without_backtrace()
                                                                 : e.what();
    throw std::runtime_error("rendezvous at " + host + ":" + std::to_string(port) + " failed (" + what +
                             "); check MASTER_ADDR/MASTER_PORT, that rank 0 runs, and that the port is free");
  }
}

Store Store::file(const std::string& path, int worldSize, std::chrono::milliseconds timeout) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, worldSize);
  store->setTimeout(timeout);
  return Store(store);
}

Store Store::hash(std::chrono::milliseconds timeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  store->setTimeout(timeout);
  return Store(store);
}

Store Store::prefixed(const std::string& prefix) const {
  return Store(c10::make_intrusive<c10d::PrefixStore>(prefix, store_));
}

void Store::set(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::string Store::get(const std::string& key) {
  const std::vector<uint8_t> value = store_->get(key);
  return std::string(value.begin(), value.end());
}

int64_t Store::add(const std::string& key, int64_t delta) { return store_->add(key, delta); }

}  // namespace dtbench::comm
