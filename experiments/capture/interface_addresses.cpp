#include "experiments/capture/interface_addresses.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

namespace dtbench::capture {

std::vector<std::string> interfaceAddresses(const std::string& interface) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    throw std::runtime_error(std::string("cannot list the interfaces' addresses (getifaddrs: ") +
                             std::strerror(errno) + ")");
  std::vector<std::string> addresses;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_name == nullptr || interface != a->ifa_name) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      sockaddr_in v4;
      std::memcpy(&v4, a->ifa_addr, sizeof v4);
      inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 v6;
      std::memcpy(&v6, a->ifa_addr, sizeof v6);
      inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    } else {
      continue;
    }
    if (std::find(addresses.begin(), addresses.end(), text) == addresses.end()) addresses.emplace_back(text);
  }
  freeifaddrs(list);
  return addresses;
}

}  // namespace dtbench::capture
