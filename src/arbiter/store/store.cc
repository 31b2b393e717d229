// What the store backends share outside the watch machinery: event names, and the key, body and
// revision checks with their messages.
#include <string>

#include "arbiter/base/json_text.h"
#include "arbiter/store/store.h"
#include "arbiter/store/watch_hub.h"

namespace arbiter::store {

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

StatusOr<ObjectPtr> Shared(StatusOr<Object> r) {
  if (!r.ok()) return r.status();
  return std::make_shared<const Object>(std::move(*r));
}

std::vector<StatusOr<ObjectPtr>> Store::Apply(std::vector<WriteOp> ops) {
  std::vector<StatusOr<ObjectPtr>> out;
  out.reserve(ops.size());
  for (WriteOp& op : ops) {
    out.push_back(Shared(op.kind == WriteOp::Kind::kCreate ? Create(op.resource, op.ns, op.name, std::move(op.body))
                         : op.kind == WriteOp::Kind::kUpdate
                             ? Update(op.resource, op.ns, op.name, std::move(op.body), op.expected_revision)
                             : Delete(op.resource, op.ns, op.name, op.expected_revision)));
  }
  return out;
}

std::string DescribeKey(const std::string& resource, const std::string& ns, const std::string& name) {
  return resource + " \"" + (ns.empty() ? name : ns + "/" + name) + "\"";
}

Status ValidateKey(const std::string& resource, const std::string& ns, const std::string& name) {
  if (resource.empty()) {
    return InvalidArgument("an object needs a resource (such as \"pods\"); got none for name \"" + name + "\"" +
                           (ns.empty() ? "" : " in namespace \"" + ns + "\""));
  }
  if (name.empty()) {
    return InvalidArgument("an object of " + resource + " needs a name" +
                           (ns.empty() ? "" : " (namespace \"" + ns + "\")"));
  }
  return Status::Ok();
}

Status ValidateBody(const std::string& resource, const std::string& ns, const std::string& name,
                    const Json& body) {
  if (!body.is_object()) {
    return InvalidArgument("the body of " + DescribeKey(resource, ns, name) + " must be a JSON object, not " +
                           body.type_name());
  }
  auto it = body.find("metadata");
  if (it != body.end() && !it->is_object()) {
    return InvalidArgument("metadata of " + DescribeKey(resource, ns, name) + " must be a JSON object, not " +
                           it->type_name());
  }
  return Status::Ok();
}

void StampRevision(Json& body, int64_t revision) {
  // ValidateBody made sure that body and body["metadata"] (if present) are objects, so neither
  // operator[] below can throw.
  body["metadata"]["resourceVersion"] = std::to_string(revision);
}

void StampRevision(Body& body, int64_t revision) {
  // A version with its text (a deletion of an object stored earlier): the text with the revision
  // spliced into metadata, byte for byte what dump() of the stamped tree prints, so that no tree
  // is copied, walked or printed. The text's watchers read it as it is; a reader of the tree
  // parses it.
  if (body.has_text()) {
    const std::string value = "\"" + std::to_string(revision) + "\"";
    if (auto text = base::json_text::WithNestedMember(*body.shared_text(), "metadata", "resourceVersion", value)) {
      body = Body::FromText(std::move(*text));
      return;
    }
  }
  // Otherwise the tree: moved out when nobody else holds the version, copied when shared.
  Json tree = std::move(body).Release();
  if (!tree.is_object()) tree = Json::object();
  StampRevision(tree, revision);
  body = Body(std::move(tree));
}

Status CheckExpectedRevision(const char* op, const Object& current, int64_t expected_revision) {
  if (expected_revision > 0 && current.revision != expected_revision) {
    return Conflict(std::string("cannot ") + op + " " + DescribeKey(current.resource, current.ns, current.name) +
                    ": expected revision " + std::to_string(expected_revision) + " but it is at revision " +
                    std::to_string(current.revision) + "; read it again and retry");
  }
  return Status::Ok();
}

Status ValidateCompact(int64_t revision, int64_t latest) {
  if (revision < 0 || revision > latest) {
    return OutOfRange("cannot compact to revision " + std::to_string(revision) +
                      ": it must be between 0 and the latest revision, " + std::to_string(latest));
  }
  return Status::Ok();
}

}  // namespace arbiter::store
