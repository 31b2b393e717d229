#include "arbiter/api/authn.h"

#include "arbiter/api/resources.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <optional>

namespace arbiter::api {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

AuthnOutcome Refuse(int code, std::string reason, std::string message) {
  AuthnOutcome out;
  out.code = code;
  out.reason = std::move(reason);
  out.message = std::move(message);
  return out;
}

// An Impersonate-Extra-* key, as upstream reads it: percent-decoded (keys may hold '/'), lower case.
std::string ExtraKey(const std::string& in) { return Lower(PercentDecode(in, false)); }

constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";

}  // namespace

std::string ForbiddenMessage(const std::string& user, const RequestAttributes& a) {
  if (!a.resource_request) return "forbidden: User \"" + user + "\" cannot " + a.verb + " path \"" + a.path + "\"";
  const std::string resource = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  const std::string scope = a.ns.empty() ? " at the cluster scope" : " in the namespace \"" + a.ns + "\"";
  return a.resource + (a.api_group.empty() ? "" : "." + a.api_group) + (a.name.empty() ? "" : " \"" + a.name + "\"") +
         " is forbidden: User \"" + user + "\" cannot " + a.verb + " resource \"" + resource + "\" in API group \"" +
         a.api_group + "\"" + scope;
}

AuthnOutcome AuthenticateRequest(const HeaderFields& headers, const std::map<std::string, TokenUser>& tokens,
                                 Authorizer* authorizer, const RequestAttributes& attrs) {
  // 1. The bearer token.
  const std::string* authorization = nullptr;
  for (const auto& [name, value] : headers) {
    if (name != "authorization") continue;
    if (authorization != nullptr) {
      return Refuse(400, "BadRequest", "more than one Authorization header: send one");
    }
    authorization = &value;
  }
  const TokenUser* found = nullptr;
  if (authorization != nullptr && authorization->size() > 7 && Lower(authorization->substr(0, 7)) == "bearer ") {
    std::string token = authorization->substr(7);
    while (!token.empty() && token.front() == ' ') token.erase(0, 1);
    if (auto it = tokens.find(token); it != tokens.end()) found = &it->second;
  }
  if (found == nullptr) return Refuse(401, "Unauthorized", "Unauthorized");
  AuthnOutcome out;
  out.user = *found;
  out.user.groups.insert("system:authenticated");

  // 2. Impersonation.
  const std::string* as_user = nullptr;
  const std::string* as_uid = nullptr;
  std::vector<std::string> as_groups;
  std::map<std::string, std::vector<std::string>> as_extra;
  for (const auto& [name, value] : headers) {
    if (name == "impersonate-user") {
      if (as_user != nullptr) return Refuse(400, "BadRequest", "more than one Impersonate-User header");
      as_user = &value;
    } else if (name == "impersonate-uid") {
      if (as_uid != nullptr) return Refuse(400, "BadRequest", "more than one Impersonate-Uid header");
      as_uid = &value;
    } else if (name == "impersonate-group") {
      as_groups.push_back(value);
    } else if (name.starts_with("impersonate-extra-")) {
      as_extra[ExtraKey(name.substr(18))].push_back(value);
    }
  }
  const bool impersonating = as_user != nullptr || as_uid != nullptr || !as_groups.empty() || !as_extra.empty();
  if (impersonating) {
    if (as_user == nullptr || as_user->empty()) {
      return Refuse(400, "BadRequest",
                    "requested impersonation of groups, a uid or extra fields without impersonating a user");
    }
    auto allowed = [&](RequestAttributes a) { return authorizer != nullptr && authorizer->Allowed(out.user, a); };
    auto check = [&](const std::string& group, const std::string& resource, const std::string& sub,
                     const std::string& ns, const std::string& name) -> std::optional<AuthnOutcome> {
      RequestAttributes a;
      a.verb = "impersonate";
      a.api_group = group;
      a.resource = resource;
      a.subresource = sub;
      a.ns = ns;
      a.name = name;
      if (allowed(a)) return std::nullopt;
      return Refuse(403, "Forbidden", ForbiddenMessage(out.user.name, a));
    };
    TokenUser as;
    as.name = *as_user;
    if (as.name.starts_with(kServiceAccountPrefix)) {
      const std::string rest = as.name.substr(kServiceAccountPrefix.size());
      const size_t colon = rest.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
        return Refuse(400, "BadRequest", "Impersonate-User \"" + as.name + "\": want system:serviceaccount:NAMESPACE:NAME");
      }
      const std::string ns = rest.substr(0, colon);
      if (auto refused = check("", "serviceaccounts", "", ns, rest.substr(colon + 1))) return *refused;
      as.groups.insert("system:serviceaccounts");
      as.groups.insert("system:serviceaccounts:" + ns);
    } else if (auto refused = check("", "users", "", "", as.name)) {
      return *refused;
    }
    for (const std::string& g : as_groups) {
      if (auto refused = check("", "groups", "", "", g)) return *refused;
      as.groups.insert(g);
    }
    if (as_uid != nullptr) {
      if (auto refused = check("authentication.k8s.io", "uids", "", "", *as_uid)) return *refused;
      as.uid = *as_uid;
    }
    for (const auto& [key, values] : as_extra) {
      for (const std::string& v : values) {
        if (auto refused = check("authentication.k8s.io", "userextras", key, "", v)) return *refused;
      }
    }
    if (as.name != "system:anonymous") as.groups.insert("system:authenticated");
    out.user = std::move(as);
  }

  // 3. The request itself.
  if (authorizer == nullptr || !authorizer->Allowed(out.user, attrs)) {
    return Refuse(403, "Forbidden", ForbiddenMessage(out.user.name, attrs));
  }
  return out;
}

namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

StatusOr<std::map<std::string, TokenUser>> LoadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("--token-auth-file " + path + ": cannot be read");
  std::map<std::string, TokenUser> out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = SplitCsv(line);
    if (f.size() < 3 || f[0].empty() || f[1].empty()) {
      return InvalidArgument("--token-auth-file " + path + ": line " + std::to_string(n) +
                             ": want token,user,uid[,\"group1,group2\"]");
    }
    TokenUser u{f[1], f[2], {}};
    if (f.size() > 3) {
      std::stringstream gs(f[3]);
      for (std::string g; std::getline(gs, g, ',');) {
        if (!g.empty()) u.groups.insert(g);
      }
    }
    if (!out.emplace(f[0], u).second) {
      return InvalidArgument("--token-auth-file " + path + ": line " + std::to_string(n) + ": duplicate token");
    }
  }
  // An empty file must not mean "no authentication": that would also lift the loopback rule.
  if (out.empty()) return InvalidArgument("--token-auth-file " + path + ": holds no token (want token,user,uid[,\"groups\"] lines)");
  return out;
}


}  // namespace arbiter::api
