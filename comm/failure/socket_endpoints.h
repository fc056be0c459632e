#pragma once
// Socket endpoints: the TCP addresses (address and port) of this process's own sockets as the kernel
// lists them in /proc, and the addresses written in error messages, in one canonical form so that the
// two compare. The peer table (peer_table.h) uses them to tell which rank owns the address Gloo blames.
//
// Contract
//   Endpoint         an address and a port. `address` is canonical: inet_ntop's text ("10.1.0.3",
//                    "2001:db8::3"); an IPv4-mapped IPv6 address ("::ffff:10.1.0.3") becomes the IPv4
//                    address, since a dual-stack socket reports an IPv4 peer either way. str() writes
//                    "10.1.0.3:41822" or "[2001:db8::3]:41822" (and reads back with parseEndpoint).
//   TcpSocket        one socket: its local and remote endpoint (a listening socket's remote is the
//                    wildcard with port 0), kernel state (hex "st" column: 01 established, 0A listen)
//                    and inode.
//   parseProcNetTcp  the text of /proc/net/tcp or /proc/net/tcp6 -> one TcpSocket per well-formed row;
//                    the header and malformed rows are skipped; never throws. The kernel prints each
//                    32-bit word of an address as a number in the host's byte order (127.0.0.1 is
//                    0100007F on x86-64 and aarch64) and the port as plain hex; the words are decoded
//                    in the byte order of the machine this runs on, which is the one that wrote them.
//   socketInodes     link targets of /proc/self/fd/* -> the inodes of the "socket:[N]" ones.
//   ownTcpSockets()  this process's TCP sockets: its socket inodes (links in /proc/self/fd) matched
//                    against /proc/self/net/tcp and tcp6 (the process's network namespace). Empty when
//                    /proc cannot be read; never throws. A few milliseconds (a few small files).
//                    `procSelf` replaces "/proc/self" (tests).
//   findEndpoints    every endpoint written in a text the way Gloo writes one, "[address]:port" with an
//                    IPv4 or IPv6 address in the brackets (a "$seq" suffix after the port is not part
//                    of it), or a plain "a.b.c.d:port"; each with its position and text as written, in
//                    order. Brackets that hold no address (Gloo's "[pair.cc:598]" source prefix) and
//                    ports outside 1..65535 are not endpoints.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::comm {

struct Endpoint {
  std::string address;  // canonical (see above)
  uint16_t port = 0;

  std::string str() const;
  bool operator==(const Endpoint& other) const { return port == other.port && address == other.address; }
  bool operator!=(const Endpoint& other) const { return !(*this == other); }
  bool operator<(const Endpoint& other) const {
    return address != other.address ? address < other.address : port < other.port;
  }
};

// An endpoint from an address in text form (IPv4 or IPv6, no brackets) and a port; nullopt when the
// address is not one.
std::optional<Endpoint> makeEndpoint(const std::string& address, uint16_t port);
// The inverse of Endpoint::str(); nullopt for anything else.
std::optional<Endpoint> parseEndpoint(const std::string& text);

struct TcpSocket {
  Endpoint local;
  Endpoint remote;
  int state = 0;
  unsigned long inode = 0;
};

std::vector<TcpSocket> parseProcNetTcp(const std::string& text);
std::vector<unsigned long> socketInodes(const std::vector<std::string>& fdLinkTargets);
std::vector<TcpSocket> ownTcpSockets(const std::string& procSelf = "/proc/self");

struct EndpointMention {
  std::size_t position = 0;  // of the first character of `text` in the searched text
  std::string text;          // as written, e.g. "[10.1.0.3]:41822"
  Endpoint endpoint;
};

std::vector<EndpointMention> findEndpoints(const std::string& text);

}  // namespace dtbench::comm
