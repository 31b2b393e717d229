// What the parts of the store over a Kubernetes API server share (kube_store.cc, kube_watch.cc,
// kube_helpers.cc): where a resource is served, reading answers and metadata, and the watches.
// Not for use outside kubeclient/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "arbiter/base/json.h"
#include "arbiter/base/status.h"
#include "arbiter/kubeclient/kube_store.h"

namespace arbiter::kubeclient::internal {

using Json = nlohmann::json;

// Where a resource is served.
struct Route {
  std::string prefix;  // "/api/v1" or "/apis/GROUP/VERSION"
  std::string resource;
  std::string api_version, kind;
  bool namespaced = true;
  bool status = false;  // has the status subresource
};

std::string Collection(const Route& r, const std::string& ns);
std::string Item(const Route& r, const std::string& ns, const std::string& name);
// A string or integer member of an object, or the fallback (whatever the JSON holds instead).
std::string StringOf(const Json& j, const char* key, const std::string& fallback = "");
int64_t IntOf(const Json& j, const char* key, int64_t fallback = 0);
// A response's body as JSON, whichever of JSON and protobuf the server answered in (discarded
// when it is neither).
Json BodyJson(const Response& r);
// The server's message in a Status body, or the body's start.
std::string ServerMessage(const Response& r);
Status FromHttp(const std::string& method, const std::string& target, const Response& r);
StatusOr<int64_t> ParseRevision(const Json& rv, const std::string& what);
const Json* Meta(const Json& body);
std::string MetaString(const Json& body, const char* key);
const Json& Field(const Json& body, const char* key);
std::string NodeNameOf(const Json& pod);
// "…:05Z" as a MicroTime ("…:05.000000Z").
std::string MicroTime(const std::string& t);
std::string Hostname();

// A watch of `resource` (in `ns`, or every namespace) from revision `from`, read by a thread of
// its own over `client`, re-established where it left off when the server ends it.
std::unique_ptr<store::Watch> NewKubeWatch(std::unique_ptr<Client> client, Route route, std::string resource,
                                           std::string ns, int64_t from, const KubeStoreOptions& options);
// The watch of a resource the server does not serve: nothing happens, and after a while it ends
// with Gone, so that the informer asks again (the API may have been installed meanwhile).
std::unique_ptr<store::Watch> NewIdleWatch();

}  // namespace arbiter::kubeclient::internal
