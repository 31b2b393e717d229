// Who a request comes from, decided from its headers alone (before its body is read), as
// kube-apiserver's authentication and impersonation filters decide it:
//
//   1. Exactly one Authorization header, `Bearer TOKEN` (the scheme in any case), naming a user
//      of the token file; a second Authorization header is a bad request (400), never a choice.
//   2. Impersonation: Impersonate-User (and optionally Impersonate-Uid, Impersonate-Group, repeated,
//      and Impersonate-Extra-KEY, repeated) make the request run as that user, if the
//      authenticated user may `impersonate` each of them (users, or serviceaccounts for
//      system:serviceaccount:NS:NAME; groups; uids and userextras/KEY in authentication.k8s.io).
//      Groups, uid or extras without a user are a bad request. The impersonated user is also in
//      system:authenticated (and a service account in system:serviceaccounts and
//      system:serviceaccounts:NS).
//   3. Then the request itself is authorised, as the user it now runs as.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/api/authz.h"

namespace arbiter::api {

// A request's header fields in the order received, names in lower case (repeats kept).
using HeaderFields = std::vector<std::pair<std::string, std::string>>;

struct AuthnOutcome {
  int code = 0;  // 0: proceed as `user`; else the HTTP status to answer (400, 401, 403)
  std::string reason;
  std::string message;
  TokenUser user;  // with system:authenticated
};

// Authenticates by bearer token against `tokens`, applies impersonation authorised by
// `authorizer`, then authorises `attrs` as the resulting user.
AuthnOutcome AuthenticateRequest(const HeaderFields& headers, const std::map<std::string, TokenUser>& tokens,
                                 Authorizer* authorizer, const RequestAttributes& attrs);

// kube-apiserver's 403 message for `user` doing `attrs`.
std::string ForbiddenMessage(const std::string& user, const RequestAttributes& attrs);

// Reads a token file (token,user,uid,"group1,group2" per line); errors name the file and line.
StatusOr<std::map<std::string, TokenUser>> LoadTokenFile(const std::string& path);

}  // namespace arbiter::api
