// Services as kube-apiserver's Service strategy and its ClusterIP allocator leave them: defaults
// (type ClusterIP, sessionAffinity None, each port's protocol TCP and targetPort its port, single
// stack IPv4), and a cluster IP from the service range, lowest free first, kept for the
// Service's life. Nothing routes to it: the IP is what `kubectl get svc` and clients read.
#include <set>
#include <string>

#include "arbiter/api/admission.h"
#include "arbiter/base/ipv4.h"

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

// kube-apiserver's default --service-cluster-ip-range.
constexpr const char* kServiceRange = "10.96.0.0/12";

std::string Invalid(const std::string& name, const std::string& field, const std::string& detail) {
  return "Service \"" + name + "\" is invalid: " + field + ": " + detail;
}

}  // namespace

Status AdmitService(Json& object, const Json* old, store::Store& store) {
  if (!object.contains("spec") || !object["spec"].is_object()) object["spec"] = Json::object();
  Json& spec = object["spec"];
  const std::string name = object.contains("metadata") ? object["metadata"].value("name", "") : "";
  if (!spec.contains("type") || spec["type"].is_null()) spec["type"] = "ClusterIP";
  const std::string type = spec["type"].is_string() ? spec["type"].get<std::string>() : "";
  if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" && type != "ExternalName") {
    return InvalidArgument(Invalid(name, "spec.type", "Unsupported value: \"" + type +
                                                          "\": supported values: \"ClusterIP\", \"ExternalName\", "
                                                          "\"LoadBalancer\", \"NodePort\""));
  }
  if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
  if (spec.contains("ports") && spec["ports"].is_array()) {
    for (Json& port : spec["ports"]) {
      if (!port.is_object()) continue;
      if (!port.contains("protocol")) port["protocol"] = "TCP";
      if (!port.contains("targetPort") && port.contains("port")) port["targetPort"] = port["port"];
    }
  }
  if (type == "ExternalName") return Status::Ok();
  if (old != nullptr) {
    // The cluster IP is immutable: an update keeps what the Service has.
    const Json& had = (*old).value("spec", Json::object());
    const Json sent = spec.value("clusterIP", Json());
    if (had.contains("clusterIP") && !sent.is_null() && sent != had["clusterIP"] && !(sent.is_string() && sent.get<std::string>().empty())) {
      return InvalidArgument(Invalid(name, "spec.clusterIPs[0]", "Invalid value: " + sent.dump() + ": may not change once set"));
    }
    for (const char* k : {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) {
      if (had.contains(k)) spec[k] = had[k];
    }
    return Status::Ok();
  }
  spec["ipFamilies"] = Json::array({"IPv4"});
  spec["ipFamilyPolicy"] = "SingleStack";
  const std::string asked = spec.contains("clusterIP") && spec["clusterIP"].is_string() ? spec["clusterIP"].get<std::string>() : "";
  if (asked == "None") {  // headless
    spec["clusterIPs"] = Json::array({"None"});
    return Status::Ok();
  }
  auto range = Ipv4Net::Parse(kServiceRange);
  if (!range.ok()) return range.status();
  std::set<uint32_t> used;
  auto services = store.List("services", "");
  if (!services.ok()) return services.status();
  for (const store::Object& s : services->items) {
    const Json& ip = s.body->value("spec", Json::object()).value("clusterIP", Json());
    if (!ip.is_string()) continue;
    if (auto parsed = ParseIpv4(ip.get<std::string>()); parsed.ok()) used.insert(*parsed);
  }
  uint32_t ip = 0;
  if (!asked.empty()) {
    auto parsed = ParseIpv4(asked);
    if (!parsed.ok() || !range->Contains(*parsed)) {
      return InvalidArgument(Invalid(name, "spec.clusterIPs[0]", "Invalid value: \"" + asked +
                                                                     "\": failed to allocate IP " + asked +
                                                                     ": the provided IP (" + asked +
                                                                     ") is not in the valid range. The range of valid IPs is " +
                                                                     kServiceRange));
    }
    if (used.contains(*parsed)) {
      return InvalidArgument(Invalid(name, "spec.clusterIPs[0]", "Invalid value: []string{\"" + asked +
                                                                     "\"}: failed to allocate IP " + asked +
                                                                     ": provided IP is already allocated"));
    }
    ip = *parsed;
  } else {
    auto free = LowestFree(*range, 2, used);  // .1 is the kubernetes Service's, as upstream reserves it
    if (!free.ok()) return Unavailable("Internal error occurred: failed to allocate a serviceIP: range is full");
    ip = *free;
  }
  spec["clusterIP"] = FormatIpv4(ip);
  spec["clusterIPs"] = Json::array({FormatIpv4(ip)});
  return Status::Ok();
}

}  // namespace arbiter::api
