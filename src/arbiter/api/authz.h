// Who a request comes from and what they may do: the users of a token file and the
// authorisation rule of `arbiter serve`, shared by the HTTP edge (every request) and the API
// (SelfSubjectAccessReview).
#pragma once

#include <set>
#include <string>

namespace arbiter::api {

// A user of the token file: `token,user,uid,"group1,group2"` per line (kube-apiserver's
// --token-auth-file format).
struct TokenUser {
  std::string name;
  std::string uid;
  std::set<std::string> groups;
};

// Whether `user` may `verb` `resource` in namespace `ns` ("" for cluster-scoped): members of
// system:masters may do anything; members of "namespace:NS" may do anything inside NS and read
// cluster-scoped objects (nodes, priority classes, namespaces).
bool Authorized(const TokenUser& user, const std::string& verb, const std::string& resource, const std::string& ns);

}  // namespace arbiter::api
