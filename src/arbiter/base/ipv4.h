// IPv4 networks and addresses: the simulated nodes' pod CIDRs and InternalIPs, and the
// Services' cluster IPs, allocated lowest free first.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter {

// An IPv4 network "a.b.c.d/n".
struct Ipv4Net {
  uint32_t base = 0;
  int prefix = 32;
  static StatusOr<Ipv4Net> Parse(const std::string& cidr);
  uint64_t Size() const { return uint64_t{1} << (32 - prefix); }
  bool Contains(uint32_t ip) const { return Size() >= (uint64_t{1} << 32) || (ip - base) < Size(); }
};
std::string FormatIpv4(uint32_t ip);
StatusOr<uint32_t> ParseIpv4(const std::string& text);

// The lowest address of `net` from its `first` (an offset) up to the one below its broadcast
// address that `used` does not hold.
StatusOr<uint32_t> LowestFree(const Ipv4Net& net, uint32_t first, const std::set<uint32_t>& used);

}  // namespace arbiter
