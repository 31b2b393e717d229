// Reading an HTTP request's target and body at the edge.
#include "arbiter/api/http_request.h"

#include <zlib.h>

#include "arbiter/api/resources.h"

namespace arbiter::api {

// Splits a request target into its decoded path and query parameters (the last value of a
// repeated key wins, as before).
void ParseTarget(std::string_view target, std::string* path, std::map<std::string, std::string>* query) {
  const size_t q = target.find('?');
  *path = PercentDecode(target.substr(0, q), false, /*keep_separators=*/true);  // PathSegments decodes the rest
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const size_t eq = pair.find('=');
    const std::string key = PercentDecode(pair.substr(0, eq), true);
    if (!key.empty()) (*query)[key] = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
}

// Inflates a gzip (or zlib) body, refusing to produce more than `limit` bytes.
StatusOr<std::string> Inflate(const std::string& in, size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return Internal("zlib cannot start");  // gzip or zlib header
  std::string out;
  char buf[64 * 1024];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return InvalidArgument("the gzip request body is corrupt");
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      return OutOfRange("the request body inflates to more than " + std::to_string(limit) + " bytes");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) break;  // truncated input
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return InvalidArgument("the gzip request body is truncated");
  return out;
}

}  // namespace arbiter::api
