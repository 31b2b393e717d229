#include "arbiter/base/ipv4.h"

#include <arpa/inet.h>

#include <stdexcept>

namespace arbiter {

StatusOr<uint32_t> ParseIpv4(const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return InvalidArgument("\"" + text + "\" is not an IPv4 address");
  return ntohl(a.s_addr);
}

std::string FormatIpv4(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." + std::to_string((ip >> 8) & 0xff) +
         "." + std::to_string(ip & 0xff);
}

StatusOr<Ipv4Net> Ipv4Net::Parse(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  if (slash == std::string::npos) return InvalidArgument("\"" + cidr + "\" is not a CIDR (a.b.c.d/n)");
  ARBITER_ASSIGN_OR_RETURN(ip, ParseIpv4(cidr.substr(0, slash)));
  int prefix = -1;
  try {
    prefix = std::stoi(cidr.substr(slash + 1));
  } catch (const std::exception&) {
  }
  if (prefix < 0 || prefix > 32) return InvalidArgument("\"" + cidr + "\": the prefix length is not 0 to 32");
  Ipv4Net n;
  n.prefix = prefix;
  n.base = prefix == 0 ? 0 : ip & ~((uint32_t{1} << (32 - prefix)) - 1);
  return n;
}

StatusOr<uint32_t> LowestFree(const Ipv4Net& net, uint32_t first, const std::set<uint32_t>& used) {
  const uint64_t last = static_cast<uint64_t>(net.base) + net.Size() - 2;  // below broadcast
  for (uint64_t ip = static_cast<uint64_t>(net.base) + first; ip <= last; ++ip) {
    if (!used.contains(static_cast<uint32_t>(ip))) return static_cast<uint32_t>(ip);
  }
  return Unavailable("no free address left in " + FormatIpv4(net.base) + "/" + std::to_string(net.prefix));
}

}  // namespace arbiter
