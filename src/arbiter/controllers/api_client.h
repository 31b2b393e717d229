// How the controllers write: through the API's own request handling, in process, as
// kube-controller-manager's clients write through kube-apiserver. Every object a controller
// creates or changes passes the same admission, defaulting and validation as one kubectl sends
// (a controller's pod gets its priority from its PriorityClass, a name from its generateName,
// and a namespace being deleted refuses it), and every write is made as the controller's user.
//
// Errors map the response's code: 404 NotFound, 409 Conflict (AlreadyExists for a taken name),
// 422 InvalidArgument, 403 FailedPrecondition, anything else Internal; the message is the
// Status body's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arbiter/base/json.h"

#include "arbiter/api/server.h"
#include "arbiter/base/status.h"

namespace arbiter::controllers {

using Json = nlohmann::json;

class ApiClient {
 public:
  ApiClient(api::ApiServer& server, std::string user) : server_(server), user_(std::move(user)) {}

  // GET of an object or a collection (a List).
  StatusOr<Json> Get(const std::string& path);
  // POST to a collection ("/api/v1/namespaces/ns/pods"). Returns the object as stored.
  StatusOr<Json> Create(const std::string& collection, const Json& body);
  // PUT (a conditional replace when the body carries metadata.resourceVersion).
  StatusOr<Json> Update(const std::string& path, const Json& body);
  // A JSON merge patch (application/merge-patch+json).
  StatusOr<Json> MergePatch(const std::string& path, const Json& patch);
  // DELETE with DeleteOptions (propagationPolicy, preconditions, gracePeriodSeconds).
  StatusOr<Json> Delete(const std::string& path, const Json& options = Json::object());

  uint64_t requests() const { return requests_; }

 private:
  StatusOr<Json> Call(const std::string& method, const std::string& path, const Json& body,
                      std::string_view content_type);

  api::ApiServer& server_;
  std::string user_;
  uint64_t requests_ = 0;
};

// The path of a resource's collection in `ns` ("" for cluster-scoped resources or all
// namespaces), and of one object (with an optional subresource).
std::string CollectionPath(const api::ResourceInfo& info, const std::string& ns);
std::string ObjectPath(const api::ResourceInfo& info, const std::string& ns, const std::string& name,
                       std::string_view subresource = "");
// The served resource under group/version/resource; aborts when it is not served (a
// programming error: controllers name only resources of resources.h).
const api::ResourceInfo& Resource(std::string_view group, std::string_view version, std::string_view resource);

}  // namespace arbiter::controllers
