// libFuzzer target for the Kubernetes-compatible API: the input is one request, written as
//   METHOD PATH[?QUERY]\n CONTENT-TYPE\n BODY
// and is handled by an ApiServer over a memory store with the server's admission. Whatever the
// request, the server answers with a status code and a body (a Status for errors), and never
// crashes, hangs or throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "arbiter/api/admission.h"
#include "arbiter/api/server.h"
#include "arbiter/base/time.h"
#include "arbiter/store/store.h"

namespace {

std::string Line(std::string& in) {
  const size_t nl = in.find('\n');
  std::string line = in.substr(0, nl);
  in = nl == std::string::npos ? "" : in.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using arbiter::api::Request;
  std::string in(reinterpret_cast<const char*>(data), size);
  const std::string first = Line(in);
  const size_t space = first.find(' ');
  Request r;
  r.method = first.substr(0, space);
  std::string target = space == std::string::npos ? "/" : first.substr(space + 1);
  const size_t q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) {
    std::string query = target.substr(q + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string pair = query.substr(0, amp);
      const size_t eq = pair.find('=');
      r.query[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
      query = amp == std::string::npos ? "" : query.substr(amp + 1);
    }
  }
  r.headers["content-type"] = Line(in);
  r.body = in;

  auto store = arbiter::store::NewMemoryStore(64);
  arbiter::VirtualClock clock(1'800'000'000LL * arbiter::kSecond);
  arbiter::api::ApiServer server(*store, clock, 1, {});
  arbiter::api::InstallAdmission(server);
  Request ns;
  ns.method = "POST";
  ns.path = "/api/v1/namespaces";
  ns.body = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}})";
  server.Handle(ns);
  // The request twice: once on an empty namespace, once more where the first may have written.
  for (int i = 0; i < 2; ++i) {
    const arbiter::api::Response out = server.Handle(r);
    if (out.code < 200 || out.code > 599) std::abort();
    if (!out.watch && out.body.empty() && out.code != 204) std::abort();
  }
  return 0;
}
