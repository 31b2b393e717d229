#include "arbiter/api/endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace arbiter::api {

namespace {

// A YAML double-quoted scalar.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ListenAddress::Authority() const { return AuthorityWithPort(port); }

std::string ListenAddress::AuthorityWithPort(int bound_port) const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound_port);
}

StatusOr<ListenAddress> ParseListenAddress(const std::string& value) {
  auto bad = [&](const std::string& why) { return InvalidArgument("--listen " + value + ": " + why); };
  ListenAddress a;
  std::string port;
  if (value.starts_with("[")) {
    const size_t close = value.find(']');
    if (close == std::string::npos || close + 1 >= value.size() || value[close + 1] != ':') {
      return bad("want [IPV6]:PORT");
    }
    a.host = value.substr(1, close - 1);
    port = value.substr(close + 2);
    in6_addr v6{};
    if (inet_pton(AF_INET6, a.host.c_str(), &v6) != 1) return bad("\"" + a.host + "\" is not an IPv6 address");
  } else {
    const size_t colon = value.rfind(':');
    if (colon == std::string::npos) return bad("want HOST:PORT");
    a.host = value.substr(0, colon);
    port = value.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) return bad("put an IPv6 address in brackets: [ADDRESS]:PORT");
  }
  int p = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size()) return bad("the port is not a number");
  if (p < 0 || p > 65535) return bad("the port " + port + " is out of range (0 to 65535)");
  a.port = p;
  return a;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool IsWildcardHost(const std::string& host) {
  if (host.empty()) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return v4.s_addr == 0;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_UNSPECIFIED(&v6);
}

std::string KubeconfigYaml(const KubeconfigOptions& o) {
  std::string y = "# Written by arbiter serve for its own clients: export KUBECONFIG=<this file>\n"
                  "apiVersion: v1\nkind: Config\nclusters:\n- name: " + Quote(o.name) + "\n  cluster:\n    server: " +
                  Quote(o.server) + "\n";
  if (!o.ca_file.empty()) y += "    certificate-authority: " + Quote(o.ca_file) + "\n";
  y += "users:\n- name: " + Quote(o.name) + "\n  user:";
  y += o.token.empty() ? " {}\n" : "\n    token: " + Quote(o.token) + "\n";
  y += "contexts:\n- name: " + Quote(o.name) + "\n  context:\n    cluster: " + Quote(o.name) + "\n    user: " +
       Quote(o.name) + "\n    namespace: default\ncurrent-context: " + Quote(o.name) + "\npreferences: {}\n";
  return y;
}

Status WritePrivateFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable(path + ": cannot be written: " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Unavailable(path + ": cannot be written: " + why);
    }
    done += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0600);
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Unavailable(path + ": cannot be written: " + why);
  }
  return Status::Ok();
}

}  // namespace arbiter::api
