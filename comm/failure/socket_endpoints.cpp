#include "comm/failure/socket_endpoints.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

namespace dtbench::comm {
namespace {

bool isHex(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c); });
}

bool isDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Canonical text of 4 (IPv4) or 16 (IPv6) address bytes in network order.
std::string canonicalAddress(const unsigned char* bytes, std::size_t length) {
  char text[INET6_ADDRSTRLEN] = "";
  if (length == 4) return inet_ntop(AF_INET, bytes, text, sizeof text) ? text : "";
  in6_addr address6;
  std::memcpy(&address6, bytes, sizeof address6);
  if (IN6_IS_ADDR_V4MAPPED(&address6)) return canonicalAddress(bytes + 12, 4);
  return inet_ntop(AF_INET6, &address6, text, sizeof text) ? text : "";
}

// "0100007F:0CEA" (or the 32-digit IPv6 form) -> endpoint. Each 8-digit word is a number in the
// host's byte order: copying its value into memory restores the address bytes.
std::optional<Endpoint> decodeProcEndpoint(const std::string& field) {
  const auto colon = field.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string address = field.substr(0, colon), port = field.substr(colon + 1);
  if ((address.size() != 8 && address.size() != 32) || !isHex(address) || port.size() != 4 || !isHex(port))
    return std::nullopt;
  unsigned char bytes[16];
  for (std::size_t word = 0; word < address.size() / 8; ++word) {
    const auto value = static_cast<uint32_t>(std::stoul(address.substr(word * 8, 8), nullptr, 16));
    std::memcpy(bytes + word * 4, &value, 4);
  }
  Endpoint endpoint;
  endpoint.address = canonicalAddress(bytes, address.size() / 2);
  endpoint.port = static_cast<uint16_t>(std::stoul(port, nullptr, 16));
  if (endpoint.address.empty()) return std::nullopt;
  return endpoint;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

// The run of digits starting at `at` as a port: 1..65535, at most 5 digits; `end` is past the digits.
std::optional<uint16_t> portAt(const std::string& text, std::size_t at, std::size_t& end) {
  end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == at || end - at > 5) return std::nullopt;
  const unsigned long port = std::stoul(text.substr(at, end - at));
  if (port < 1 || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

}  // namespace

std::string Endpoint::str() const {
  const std::string host = address.find(':') == std::string::npos ? address : "[" + address + "]";
  return host + ":" + std::to_string(port);
}

std::optional<Endpoint> makeEndpoint(const std::string& address, uint16_t port) {
  unsigned char bytes[16];
  Endpoint endpoint;
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1)
    endpoint.address = canonicalAddress(bytes, 4);
  else if (inet_pton(AF_INET6, address.c_str(), bytes) == 1)
    endpoint.address = canonicalAddress(bytes, 16);
  else
    return std::nullopt;
  endpoint.port = port;
  return endpoint;
}

std::optional<Endpoint> parseEndpoint(const std::string& text) {
  std::string address, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find("]:");
    if (close == std::string::npos) return std::nullopt;
    address = text.substr(1, close - 1);
    port = text.substr(close + 2);
    if (address.find(':') == std::string::npos) return std::nullopt;  // only IPv6 is bracketed
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    address = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (address.find(':') != std::string::npos) return std::nullopt;
  }
  if (!isDigits(port) || port.size() > 5 || std::stoul(port) > 65535) return std::nullopt;
  return makeEndpoint(address, static_cast<uint16_t>(std::stoul(port)));
}

std::vector<TcpSocket> parseProcNetTcp(const std::string& text) {
  std::vector<TcpSocket> sockets;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode ..."
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode))
      continue;
    if (slot.empty() || slot.back() != ':' || !isHex(state) || state.size() > 2 || !isDigits(inode)) continue;
    const auto localEndpoint = decodeProcEndpoint(local);
    const auto remoteEndpoint = decodeProcEndpoint(remote);
    if (!localEndpoint || !remoteEndpoint) continue;
    TcpSocket socket;
    socket.local = *localEndpoint;
    socket.remote = *remoteEndpoint;
    socket.state = static_cast<int>(std::stoul(state, nullptr, 16));
    socket.inode = std::stoul(inode);
    sockets.push_back(std::move(socket));
  }
  return sockets;
}

std::vector<unsigned long> socketInodes(const std::vector<std::string>& fdLinkTargets) {
  static const std::string kPrefix = "socket:[";
  std::vector<unsigned long> inodes;
  for (const std::string& target : fdLinkTargets) {
    if (target.size() <= kPrefix.size() + 1 || target.compare(0, kPrefix.size(), kPrefix) != 0 || target.back() != ']')
      continue;
    const std::string digits = target.substr(kPrefix.size(), target.size() - kPrefix.size() - 1);
    if (isDigits(digits) && digits.size() < 20) inodes.push_back(std::stoul(digits));
  }
  return inodes;
}

std::vector<TcpSocket> ownTcpSockets(const std::string& procSelf) {
  std::vector<std::string> targets;
  if (DIR* fds = ::opendir((procSelf + "/fd").c_str())) {
    while (const dirent* entry = ::readdir(fds)) {
      if (entry->d_name[0] == '.') continue;
      char target[128];
      const std::string path = procSelf + "/fd/" + entry->d_name;
      const ssize_t length = ::readlink(path.c_str(), target, sizeof target - 1);
      if (length > 0) targets.emplace_back(target, static_cast<std::size_t>(length));
    }
    ::closedir(fds);
  }
  std::vector<unsigned long> inodes = socketInodes(targets);
  std::sort(inodes.begin(), inodes.end());
  std::vector<TcpSocket> own;
  if (inodes.empty()) return own;
  for (const char* table : {"/net/tcp", "/net/tcp6"})
    for (TcpSocket& socket : parseProcNetTcp(readFile(procSelf + table)))
      if (socket.inode != 0 && std::binary_search(inodes.begin(), inodes.end(), socket.inode))
        own.push_back(std::move(socket));
  return own;
}

std::vector<EndpointMention> findEndpoints(const std::string& text) {
  std::vector<EndpointMention> mentions;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i;
    std::optional<Endpoint> endpoint;
    if (text[i] == '[') {
      // "[address]:port": the address must parse (Gloo's "[pair.cc:598]" prefix does not).
      const auto close = text.find(']', i + 1);
      if (close != std::string::npos && close - i <= INET6_ADDRSTRLEN && close + 1 < text.size() &&
          text[close + 1] == ':') {
        if (const auto port = portAt(text, close + 2, end))
          endpoint = makeEndpoint(text.substr(i + 1, close - i - 1), *port);
      }
    } else if (std::isdigit(static_cast<unsigned char>(text[i])) &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.' ||
                            text[i - 1] == ':' || text[i - 1] == '_' || text[i - 1] == '-'))) {
      // Plain "a.b.c.d:port".
      std::size_t dots = i;
      while (dots < text.size() && (std::isdigit(static_cast<unsigned char>(text[dots])) || text[dots] == '.')) ++dots;
      unsigned char bytes[4];
      if (dots < text.size() && text[dots] == ':' && inet_pton(AF_INET, text.substr(i, dots - i).c_str(), bytes) == 1) {
        if (const auto port = portAt(text, dots + 1, end)) endpoint = makeEndpoint(text.substr(i, dots - i), *port);
      }
    }
    if (endpoint) {
      mentions.push_back({i, text.substr(i, end - i), *endpoint});
      i = end;
    } else {
      ++i;
    }
  }
  return mentions;
}

}  // namespace dtbench::comm
