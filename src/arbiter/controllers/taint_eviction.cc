// Taint-based eviction.
#include "arbiter/controllers/taint_eviction.h"

#include "arbiter/controllers/object_json.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controllers {

namespace {

std::vector<model::Taint> NoExecuteTaints(const Json& node) {
  std::vector<model::Taint> out;
  const Json* taints = Find(node, {"spec", "taints"});
  if (taints == nullptr || !taints->is_array()) return out;
  for (const Json& t : *taints) {
    if (!t.is_object() || t.value("effect", "") != "NoExecute") continue;
    out.push_back({t.value("key", ""), t.value("value", ""), model::TaintEffect::kNoExecute});
  }
  return out;
}

// A node's NoExecute taints as one string, to tell whether they changed ("" without any).
std::string NoExecuteSignature(const Json& node) {
  std::string out;
  for (const model::Taint& t : NoExecuteTaints(node)) out.append(t.key).append(1, '=').append(t.value).append(1, '\n');
  return out;
}

}  // namespace

void TaintEvictionController::Evaluate(Context& ctx, const Key& key) {
  const store::Object* p = ctx.informer("pods").Find(key);
  auto cancel = [&] { due_.erase(key); };
  if (p == nullptr || PodTerminal(*p->body.tree()) || BeingDeleted(*p->body.tree())) return cancel();
  const std::string node_name = StringAt(*p->body.tree(), {"spec", "nodeName"});
  // Sync keeps every node's NoExecute taints as they are (no_execute_), so a node without any is
  // known without reading its body: most nodes, and reading each of theirs again per pod parsed a
  // node a pod (the nodes' trees are rarely written, so rarely cached).
  if (node_name.empty() || !no_execute_.contains(node_name)) return cancel();
  const store::Object* node = ctx.informer("nodes").Find({"", node_name});
  const std::vector<model::Taint> taints = node != nullptr ? NoExecuteTaints(*node->body.tree()) : std::vector<model::Taint>{};
  if (taints.empty()) return cancel();
  manifest::LoadResult decoded = manifest::DecodeJson("pod " + key.first + "/" + key.second, *p->body.tree());
  if (decoded.objects.pods.empty()) return cancel();
  const std::vector<model::Toleration>& tolerations = decoded.objects.pods.front().object.tolerations;
  const Timestamp now = ctx.now();
  // getMinTolerationTime over the tolerations used: none untolerated, else the least seconds.
  std::optional<int64_t> seconds;
  bool forever = false;
  for (const model::Taint& t : taints) {
    if (!model::TolerationsTolerate(tolerations, t)) {
      seconds = 0;
      forever = false;
      break;
    }
    bool bounded = true;
    std::optional<int64_t> least;
    for (const model::Toleration& tol : tolerations) {
      if (!tol.Tolerates(t)) continue;
      if (!tol.toleration_seconds) {
        bounded = false;
        break;
      }
      least = least ? std::min(*least, *tol.toleration_seconds) : *tol.toleration_seconds;
    }
    if (!bounded) {
      forever = true;
      continue;
    }
    if (least) seconds = seconds ? std::min(*seconds, *least) : *least;
  }
  if (!seconds) {
    if (forever) cancel();
    return;
  }
  const Timestamp at = AddSecondsCapped(now, std::max<int64_t>(*seconds, 0));  // tolerationSeconds is user input
  auto [it, fresh] = due_.try_emplace(key, at);
  if (!fresh) it->second = std::min(it->second, at);
  queue_.AddAfter(key, it->second);
}

Status TaintEvictionController::Evict(Context& ctx, const Key& key) {
  auto due = due_.find(key);
  if (due == due_.end() || due->second > ctx.now()) return Status::Ok();  // cancelled, or moved later
  const Timestamp when = due->second;
  due_.erase(due);
  // A write that failed (not one that lost a race: the pod changed, and its change is evaluated
  // afresh) keeps the eviction due, for the queue's retry with backoff.
  auto retry = [&](const Status& s) {
    if (s.code() != StatusCode::kConflict) due_[key] = when;
    return s;
  };
  const store::Object* p = ctx.informer("pods").Find(key);
  if (p == nullptr || BeingDeleted(*p->body.tree())) return Status::Ok();
  const api::ResourceInfo& pod_info = Resource("", "v1", "pods");
  ctx.Event(*p->body.tree(), "Pod", "v1", "Normal", "TaintManagerEviction", "Marking for deletion Pod " + key.first + "/" + key.second,
            std::string(Name()));
  Json body = p->body.Copy();
  Json& status = body["status"];
  if (!status.is_object()) status = Json::object();
  rules::UpdatePodCondition(status,
                            {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "DeletionByTaintManager"},
                             {"message", "Taint manager: deleting due to NoExecute taint"}},
                            FormatRfc3339(ctx.now() / kSecond * kSecond));
  auto marked = ctx.api().Update(ObjectPath(pod_info, key.first, key.second, "status"), body);
  if (!marked.ok() && marked.status().code() != StatusCode::kConflict) {
    return marked.status().code() == StatusCode::kNotFound ? Status::Ok() : retry(marked.status());
  }
  auto r = ctx.api().Delete(ObjectPath(pod_info, key.first, key.second), {{"preconditions", {{"uid", Uid(*p->body.tree())}}}});
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return retry(r.status());
  return Status::Ok();
}

Status TaintEvictionController::Sync(Context& ctx, const Changes& changed) {
  const store::Informer& pods = ctx.informer("pods");
  const store::Informer& nodes = ctx.informer("nodes");
  std::set<Key> look;
  for (const Key& key : changed.at("pods")) {
    look.insert(key);
    const store::Object* p = pods.Find(key);
    on_node_.Set(key, p != nullptr ? StringAt(*p->body.tree(), {"spec", "nodeName"}) : "");
  }
  // The pods of a node whose NoExecute taints are what they were need no new decision: the
  // same taints and tolerations give the same time, and Evaluate keeps the earlier one.
  for (const Key& key : changed.at("nodes")) {
    const store::Object* n = nodes.Find(key);
    const std::string taints = n != nullptr ? NoExecuteSignature(*n->body.tree()) : "";
    auto was = no_execute_.find(key.second);
    if ((was != no_execute_.end() ? was->second : "") == taints) continue;
    if (taints.empty()) {
      no_execute_.erase(was);
    } else {
      no_execute_[key.second] = taints;
    }
    const std::set<Key>& on = on_node_.Of(key.second);
    look.insert(on.begin(), on.end());
  }
  for (const Key& key : look) Evaluate(ctx, key);
  return queue_.ProcessDue(
      ctx.now(), [&](const Key& key) { return Evict(ctx, key); },
      [](const Key& key) { return "pod " + key.first + "/" + key.second; });
}

}  // namespace arbiter::controllers
