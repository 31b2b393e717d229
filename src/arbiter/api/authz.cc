#include "arbiter/api/authz.h"

namespace arbiter::api {

bool Authorized(const TokenUser& user, const std::string& verb, const std::string& resource, const std::string& ns) {
  if (user.groups.count("system:masters") > 0) return true;
  // Every authenticated user may ask what it may do and who it is (system:basic-user).
  if (verb == "create" && (resource == "selfsubjectaccessreviews" || resource == "selfsubjectreviews")) return true;
  const bool read = verb == "get" || verb == "list" || verb == "watch";
  if (ns.empty()) return read && (resource == "nodes" || resource == "priorityclasses" || resource == "namespaces");
  if (resource == "namespaces") return read && user.groups.count("namespace:" + ns) > 0;
  return user.groups.count("namespace:" + ns) > 0;
}

}  // namespace arbiter::api
