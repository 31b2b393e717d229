// Defaults and validation of the workload kinds (apps/v1 Deployment, ReplicaSet, StatefulSet;
// batch/v1 Job, CronJob), as kube-apiserver's defaulting functions and strategies apply them, so
// that what kubectl reads back carries the fields the controllers act on.
#include <string>

#include "arbiter/api/admission.h"
#include "arbiter/api/pod_defaults.h"
#include "arbiter/manifest/loader.h"

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

Json& Obj(Json& parent, const char* key) {
  Json& v = parent[key];
  if (!v.is_object()) v = Json::object();
  return v;
}

// Go's %v of a map[string]string, as upstream's messages print labels.
std::string GoMap(const Json& labels) {
  std::string out = "map[string]string{";
  bool first = true;
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      out += (first ? "" : ", ") + Json(k).dump() + ":" + v.dump();
      first = false;
    }
  }
  return out + "}";
}

// The selector checks every replicating kind shares: present, not empty, selecting the
// template's labels, and unchanged by an update.
Status CheckSelector(const std::string& what, const Json& spec, const Json* old) {
  const Json* sel = spec.contains("selector") ? &spec["selector"] : nullptr;
  if (sel == nullptr || sel->is_null()) return InvalidArgument(what + " is invalid: spec.selector: Required value");
  auto decoded = manifest::DecodeLabelSelectorJson(*sel, "spec.selector");
  if (!decoded.ok()) return InvalidArgument(what + " is invalid: " + decoded.status().message());
  if (!*decoded || (*decoded)->empty()) {
    return InvalidArgument(what + " is invalid: spec.selector: Invalid value: " + sel->dump() + ": empty selector is invalid for " +
                           "this kind");
  }
  const Json& labels =
      spec.contains("template") && spec["template"].is_object() && spec["template"].contains("metadata") &&
              spec["template"]["metadata"].is_object() && spec["template"]["metadata"].contains("labels")
          ? spec["template"]["metadata"]["labels"]
          : Json::object();
  std::vector<std::pair<std::string, std::string>> entries;
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) entries.emplace_back(k, v.get<std::string>());
    }
  }
  if (!(*decoded)->Matches(model::LabelMap(std::move(entries)))) {
    return InvalidArgument(what + " is invalid: spec.template.metadata.labels: Invalid value: " + GoMap(labels) +
                           ": `selector` does not match template `labels`");
  }
  if (old != nullptr && old->contains("spec") && (*old)["spec"].is_object() && (*old)["spec"].contains("selector") &&
      (*old)["spec"]["selector"] != *sel) {
    return InvalidArgument(what + " is invalid: spec.selector: Invalid value: " + sel->dump() + ": field is immutable");
  }
  return Status::Ok();
}

Status CheckReplicas(const std::string& what, const Json& spec) {
  if (spec.contains("replicas") && spec["replicas"].is_number_integer() && spec["replicas"].get<int64_t>() < 0) {
    return InvalidArgument(what + " is invalid: spec.replicas: Invalid value: " + spec["replicas"].dump() +
                           ": must be greater than or equal to 0");
  }
  return Status::Ok();
}

}  // namespace

Status AdmitWorkload(const ResourceInfo& info, Json& object, const Json* old) {
  const std::string resource = info.StoreKey();
  if (resource != "deployments" && resource != "replicasets" && resource != "statefulsets" && resource != "jobs" &&
      resource != "cronjobs") {
    return Status::Ok();
  }
  Json& md = Obj(object, "metadata");
  const std::string name = md.value("name", "");
  const std::string what = std::string(info.kind) + "." + std::string(info.group) + " \"" + name + "\"";
  Json& spec = Obj(object, "spec");
  if (resource == "deployments") {
    SetDefault(spec, "replicas", 1);
    Json& strategy = Obj(spec, "strategy");
    SetDefault(strategy, "type", "RollingUpdate");
    if (strategy["type"] == "RollingUpdate") {
      Json& ru = Obj(strategy, "rollingUpdate");
      SetDefault(ru, "maxSurge", "25%");
      SetDefault(ru, "maxUnavailable", "25%");
    }
    SetDefault(spec, "revisionHistoryLimit", 10);
    SetDefault(spec, "progressDeadlineSeconds", 600);
  } else if (resource == "replicasets") {
    SetDefault(spec, "replicas", 1);
  } else if (resource == "statefulsets") {
    SetDefault(spec, "replicas", 1);
    SetDefault(spec, "podManagementPolicy", "OrderedReady");
    Json& strategy = Obj(spec, "updateStrategy");
    SetDefault(strategy, "type", "RollingUpdate");
    if (strategy["type"] == "RollingUpdate") SetDefault(Obj(strategy, "rollingUpdate"), "partition", 0);
    SetDefault(spec, "revisionHistoryLimit", 10);
  } else if (resource == "cronjobs") {
    SetDefault(spec, "concurrencyPolicy", "Allow");
    SetDefault(spec, "suspend", false);
    SetDefault(spec, "successfulJobsHistoryLimit", 3);
    SetDefault(spec, "failedJobsHistoryLimit", 1);
    Json& job_spec = Obj(Obj(spec, "jobTemplate"), "spec");
    if (job_spec.contains("template") && job_spec["template"].is_object() && job_spec["template"].contains("spec")) {
      DefaultPodSpec(job_spec["template"]["spec"]);
    }
    return Status::Ok();
  }
  if (resource == "jobs") {
    // SetDefaults_Job.
    if ((!spec.contains("completions") || spec["completions"].is_null()) &&
        (!spec.contains("parallelism") || spec["parallelism"].is_null())) {
      spec["completions"] = 1;
      spec["parallelism"] = 1;
    }
    SetDefault(spec, "parallelism", 1);
    const bool per_index = spec.contains("backoffLimitPerIndex") && !spec["backoffLimitPerIndex"].is_null();
    SetDefault(spec, "backoffLimit", per_index ? INT32_MAX : 6);
    SetDefault(spec, "completionMode", "NonIndexed");
    SetDefault(spec, "suspend", false);
    const bool has_policy = spec.contains("podFailurePolicy") && !spec["podFailurePolicy"].is_null();
    SetDefault(spec, "podReplacementPolicy", has_policy ? "Failed" : "TerminatingOrFailed");
    SetDefault(spec, "manualSelector", false);
    Json& tmpl = Obj(spec, "template");
    Json& tmd = Obj(tmpl, "metadata");
    const std::string policy = tmpl.contains("spec") && tmpl["spec"].is_object() ? tmpl["spec"].value("restartPolicy", "") : "";
    if (policy != "Never" && policy != "OnFailure") {
      return InvalidArgument(what + " is invalid: spec.template.spec.restartPolicy: " +
                             (policy.empty() ? std::string("Required value")
                                             : "Unsupported value: \"" + policy + "\"") +
                             ": supported values: \"OnFailure\", \"Never\"");
    }
    if (old == nullptr && !spec.value("manualSelector", false)) {
      // The job strategy's generateSelector: the Job's uid selects its pods.
      if (spec.contains("selector") && !spec["selector"].is_null()) {
        return InvalidArgument(what + " is invalid: spec.selector: Invalid value: " + spec["selector"].dump() +
                               ": `selector` will be auto-generated");
      }
      const std::string uid = md.value("uid", "");
      Json& labels = Obj(tmd, "labels");
      labels["batch.kubernetes.io/controller-uid"] = uid;
      labels["batch.kubernetes.io/job-name"] = name;
      labels["controller-uid"] = uid;
      labels["job-name"] = name;
      spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
    }
    if (!md.contains("labels") || !md["labels"].is_object() || md["labels"].empty()) {
      if (tmd.contains("labels")) md["labels"] = tmd["labels"];
    }
    if (old != nullptr && old->contains("spec") && (*old)["spec"].contains("template") &&
        (*old)["spec"]["template"] != spec["template"] && !(*old)["spec"].value("suspend", false)) {
      return InvalidArgument(what + " is invalid: spec.template: Invalid value: ...: field is immutable");
    }
  }
  // The template is a pod spec, defaulted as one (after the Job's restartPolicy check above:
  // a Job must say Never or OnFailure itself).
  if (spec.contains("template") && spec["template"].is_object() && spec["template"].contains("spec")) {
    DefaultPodSpec(spec["template"]["spec"]);
  }
  ARBITER_RETURN_IF_ERROR(CheckReplicas(what, spec));
  return CheckSelector(what, spec, old);
}

}  // namespace arbiter::api
