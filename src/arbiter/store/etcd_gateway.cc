// Reading etcd's v3 JSON gateway answers, its errors, and the request bodies the store sends.
#include "arbiter/store/etcd_internal.h"

namespace arbiter::store::etcd {

sigset_t PipeSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

// ---- reading the gateway's JSON (proto3 mapping: absent fields are defaults) ----

const Json& Field(const Json& j, const char* name) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(name);
  return it == j.end() ? kNull : *it;
}

const Json& Element(const Json& j, size_t i) {
  static const Json kNull;
  return j.is_array() && i < j.size() ? j[i] : kNull;
}

int64_t Int(const Json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  return 0;
}

bool Bool(const Json& j) { return j.is_boolean() && j.get<bool>(); }

std::string Text(const Json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

int64_t HeaderRevision(const Json& response) { return Int(Field(Field(response, "header"), "revision")); }

// The key just after every key that starts with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = prefix.back();
    if (static_cast<unsigned char>(last) < 0xff) {
      last = static_cast<char>(static_cast<unsigned char>(last) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::string Shorten(std::string s) {
  constexpr size_t kMax = 300;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string DescribeEtcdWatch(const std::string& resource, const std::string& ns) {
  std::string d = "the watch of " + resource;
  if (!ns.empty()) d += " in namespace \"" + ns + "\"";
  return d;
}

std::string DescribeHttpError(httplib::Error e, Millis timeout) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect";
    case httplib::Error::ConnectionTimeout:
      return "connection not accepted within " + std::to_string(timeout.count()) + " ms";
    case httplib::Error::Read:
      return "no answer within " + std::to_string(timeout.count()) + " ms (or the connection was closed)";
    case httplib::Error::Write:
      return "cannot send the request";
    default:
      return "request failed (" + httplib::to_string(e) + ")";
  }
}

// The Status for an etcd error answer (the gateway's {"error", "code", "message"}).
Status EtcdError(int64_t grpc_code, const std::string& message, const std::string& prefix) {
  const std::string m = prefix + message;
  if (message.find("required revision has been compacted") != std::string::npos) return Gone(m);
  if (message.find("required revision is a future revision") != std::string::npos) return OutOfRange(m);
  switch (grpc_code) {
    case 3:  // INVALID_ARGUMENT, such as a request over etcd's size limit
      return InvalidArgument(m);
    case 4:   // DEADLINE_EXCEEDED
    case 8:   // RESOURCE_EXHAUSTED: the database is full
    case 14:  // UNAVAILABLE: no leader, leader changed, shutting down
      return Unavailable(m);
    case 7:   // PERMISSION_DENIED
    case 16:  // UNAUTHENTICATED
      return FailedPrecondition(m);
    default:
      return Internal(m);
  }
}

// ---- request bodies ----

Json Compare(const std::string& key, const char* target, const char* result, const char* field, int64_t value) {
  Json c = Json::object();
  c["key"] = Base64Encode(key);
  c["target"] = target;
  c["result"] = result;
  c[field] = std::to_string(value);
  return c;
}

Json Op(const char* kind, Json request) {
  Json op = Json::object();
  op[kind] = std::move(request);
  return op;
}

Json KeyRequest(const std::string& key) {
  Json r = Json::object();
  r["key"] = Base64Encode(key);
  return r;
}


Json Txn(Json compare, Json success, Json failure) {
  Json t = Json::object();
  t["compare"] = Json::array({std::move(compare)});
  t["success"] = Json::array({std::move(success)});
  if (!failure.is_null()) t["failure"] = Json::array({std::move(failure)});
  return t;
}


}  // namespace arbiter::store::etcd
