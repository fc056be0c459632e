#pragma once
// The IPv4 and IPv6 addresses of one network interface of this network namespace (getifaddrs), as
// inet_ntop writes them ("10.78.0.1", "fe80::1c2b:3ff:fe4d:5e6f"; an IPv6 scope is not part of the
// text). A capture records them so that `analyze` can tell which packets a node sent.
//
// Contract
//   interfaceAddresses  the addresses in getifaddrs' order, without repeats; empty for an
//                       interface without addresses or one that does not exist. Throws
//                       std::runtime_error when getifaddrs itself fails.

#include <string>
#include <vector>

namespace dtbench::capture {

std::vector<std::string> interfaceAddresses(const std::string& interface);

}  // namespace dtbench::capture
