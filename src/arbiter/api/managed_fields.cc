#include "arbiter/api/managed_fields.h"

#include <algorithm>
#include <set>

#include "arbiter/api/patch.h"

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

using Path = std::vector<std::string>;

// Metadata the server sets or that names the object: nobody's field.
bool ServerMetadata(const std::string& key) {
  static const std::set<std::string> kKeys = {"name",         "namespace",         "uid",
                                              "resourceVersion", "generation",     "creationTimestamp",
                                              "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
                                              "selfLink"};
  return kKeys.contains(key);
}

// "k:{"name":"c"}" for an element of a list merged by `key`.
std::string KeyElement(const std::string& key, const Json& value) { return "k:" + Json{{key, value}}.dump(); }

void Walk(const Json& value, const std::string& field, FieldSet& out, Path& path);

void WalkObject(const Json& object, FieldSet& out, Path& path, bool top, std::string_view subresource) {
  for (const auto& [key, value] : object.items()) {
    if (top && (key == "apiVersion" || key == "kind")) continue;
    if (top && (subresource == "status") != (key == "status")) continue;
    path.push_back("f:" + key);
    if (top && key == "metadata" && value.is_object()) {
      for (const auto& [mk, mv] : value.items()) {
        if (ServerMetadata(mk)) continue;
        path.push_back("f:" + mk);
        Walk(mv, mk, out, path);
        path.pop_back();
      }
    } else {
      Walk(value, key, out, path);
    }
    path.pop_back();
  }
}

// One field's value: an object's fields, a merged list's elements by key, else a leaf.
void Walk(const Json& value, const std::string& field, FieldSet& out, Path& path) {
  if (value.is_object() && !value.empty()) {
    WalkObject(value, out, path, false, "");
    return;
  }
  if (value.is_array() && !value.empty()) {
    const std::string* key = MergeKeyOf(field);
    const bool keyed = key != nullptr && std::all_of(value.begin(), value.end(),
                                                     [&](const Json& e) { return e.is_object() && e.contains(*key); });
    if (keyed) {
      for (const Json& element : value) {
        path.push_back(KeyElement(*key, element[*key]));
        path.push_back(".");
        out.Insert(path);
        path.pop_back();
        WalkObject(element, out, path, false, "");
        path.pop_back();
      }
      return;
    }
  }
  out.Insert(path);
}

struct Entry {
  std::string manager, operation, api_version, time, subresource;
  FieldSet fields;
};

std::vector<Entry> EntriesOf(const Json* object) {
  std::vector<Entry> out;
  if (object == nullptr) return out;
  const Json* list = object->contains("metadata") && (*object)["metadata"].is_object() &&
                             (*object)["metadata"].contains("managedFields")
                         ? &(*object)["metadata"]["managedFields"]
                         : nullptr;
  if (list == nullptr || !list->is_array()) return out;
  for (const Json& e : *list) {
    if (!e.is_object()) continue;
    Entry x;
    x.manager = e.value("manager", "");
    x.operation = e.value("operation", "");
    x.api_version = e.value("apiVersion", "");
    x.time = e.value("time", "");
    x.subresource = e.value("subresource", "");
    x.fields = FieldSet::FromFieldsV1(e.value("fieldsV1", Json::object()));
    out.push_back(std::move(x));
  }
  return out;
}

void Store(std::vector<Entry>& entries, Json& object) {
  std::erase_if(entries, [](const Entry& e) { return e.fields.empty(); });
  Json& md = object["metadata"];
  if (entries.empty()) {
    md.erase("managedFields");
    return;
  }
  Json list = Json::array();
  for (const Entry& e : entries) {
    Json j = {{"manager", e.manager},          {"operation", e.operation}, {"apiVersion", e.api_version},
              {"time", e.time},                {"fieldsType", "FieldsV1"}, {"fieldsV1", e.fields.ToFieldsV1()}};
    if (!e.subresource.empty()) j["subresource"] = e.subresource;
    list.push_back(std::move(j));
  }
  md["managedFields"] = std::move(list);
}

Entry& EntryFor(std::vector<Entry>& entries, const std::string& manager, const std::string& operation,
                const std::string& subresource) {
  for (Entry& e : entries) {
    if (e.manager == manager && e.operation == operation && e.subresource == subresource) return e;
  }
  entries.push_back({manager, operation, "", "", subresource, {}});
  return entries.back();
}

// Removes the field at `path` from `object` (a list element by its key, a key of an object).
void EraseAt(Json& object, const Path& path) {
  if (path.empty()) return;
  Json* parent = &object;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const std::string& e = path[i];
    if (e == ".") return;
    if (e.starts_with("f:")) {
      if (!parent->is_object() || !parent->contains(e.substr(2))) return;
      parent = &(*parent)[e.substr(2)];
    } else if (e.starts_with("k:")) {
      const Json key = Json::parse(e.substr(2), nullptr, false);
      if (!parent->is_array() || !key.is_object() || key.empty()) return;
      auto it = std::find_if(parent->begin(), parent->end(), [&](const Json& x) {
        return x.is_object() && x.contains(key.begin().key()) && x[key.begin().key()] == key.begin().value();
      });
      if (it == parent->end()) return;
      if (i + 2 == path.size() && path.back() == ".") {
        parent->erase(it);  // the element itself
        return;
      }
      parent = &*it;
    }
  }
  const std::string& last = path.back();
  if (last.starts_with("f:") && parent->is_object()) parent->erase(last.substr(2));
}

}  // namespace

FieldSet FieldSet::Of(const Json& object, std::string_view subresource) {
  FieldSet out;
  Path path;
  if (object.is_object()) WalkObject(object, out, path, true, subresource);
  return out;
}

FieldSet FieldSet::FromFieldsV1(const Json& fields) {
  FieldSet out;
  if (!fields.is_object()) return out;
  for (const auto& [k, v] : fields.items()) {
    FieldSet child = FromFieldsV1(v);
    if (child.children_.empty()) child.leaf_ = true;
    out.children_[k] = std::move(child);
  }
  return out;
}

Json FieldSet::ToFieldsV1() const {
  Json out = Json::object();
  for (const auto& [k, child] : children_) out[k] = child.ToFieldsV1();
  return out;
}

void FieldSet::Collect(Path& prefix, std::vector<Path>& out) const {
  if (leaf_ && !prefix.empty()) out.push_back(prefix);
  for (const auto& [k, child] : children_) {
    prefix.push_back(k);
    child.Collect(prefix, out);
    prefix.pop_back();
  }
}

std::vector<Path> FieldSet::Leaves() const {
  std::vector<Path> out;
  Path prefix;
  Collect(prefix, out);
  return out;
}

bool FieldSet::Contains(const Path& path) const {
  const FieldSet* at = this;
  for (const std::string& e : path) {
    auto it = at->children_.find(e);
    if (it == at->children_.end()) return false;
    at = &it->second;
  }
  return at->leaf_;
}

void FieldSet::Insert(const Path& path) {
  FieldSet* at = this;
  for (const std::string& e : path) at = &at->children_[e];
  at->leaf_ = true;
}

void FieldSet::Erase(const Path& path) {
  if (path.empty()) return;
  std::vector<FieldSet*> chain = {this};
  for (const std::string& e : path) {
    auto it = chain.back()->children_.find(e);
    if (it == chain.back()->children_.end()) return;
    chain.push_back(&it->second);
  }
  chain.back()->leaf_ = false;
  // Prune the branches left empty.
  for (size_t i = path.size(); i > 0; --i) {
    FieldSet* node = chain[i];
    if (node->leaf_ || !node->children_.empty()) break;
    chain[i - 1]->children_.erase(path[i - 1]);
  }
}

const Json* ValueAt(const Json& object, const Path& path) {
  const Json* at = &object;
  for (const std::string& e : path) {
    if (e == ".") continue;
    if (e.starts_with("f:")) {
      if (!at->is_object() || !at->contains(e.substr(2))) return nullptr;
      at = &(*at)[e.substr(2)];
    } else if (e.starts_with("k:")) {
      const Json key = Json::parse(e.substr(2), nullptr, false);
      if (!at->is_array() || !key.is_object() || key.empty()) return nullptr;
      const Json* found = nullptr;
      for (const Json& x : *at) {
        if (x.is_object() && x.contains(key.begin().key()) && x[key.begin().key()] == key.begin().value()) found = &x;
      }
      if (found == nullptr) return nullptr;
      at = found;
    } else {
      return nullptr;
    }
  }
  return at;
}

std::string PathText(const Path& path) {
  std::string out;
  for (const std::string& e : path) {
    if (e.starts_with("f:")) {
      out += "." + e.substr(2);
    } else if (e.starts_with("k:")) {
      const Json key = Json::parse(e.substr(2), nullptr, false);
      if (key.is_object() && !key.empty()) out += "[" + key.begin().key() + "=" + key.begin().value().dump() + "]";
    }
  }
  return out;
}

StatusOr<std::string> ManagerOf(const std::string& field_manager, const std::string& user_agent) {
  if (!field_manager.empty()) {
    if (field_manager.size() > 128) {
      return InvalidArgument("fieldManager: Too long: may not be more than 128 bytes");
    }
    for (unsigned char c : field_manager) {
      if (c < 0x20 || c == 0x7f) return InvalidArgument("fieldManager: Invalid value: must only contain printable characters");
    }
    return field_manager;
  }
  std::string agent = user_agent.substr(0, user_agent.find('/'));
  if (agent.size() > 128) agent.resize(128);
  std::erase_if(agent, [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  return agent.empty() ? std::string("unknown") : agent;
}

void RecordUpdate(const Json* old, Json& object, const std::string& manager, const std::string& api_version,
                  const std::string& subresource, const std::string& time) {
  std::vector<Entry> entries = EntriesOf(old);
  const FieldSet now = FieldSet::Of(object, subresource);
  const FieldSet before = old != nullptr ? FieldSet::Of(*old, subresource) : FieldSet();
  std::vector<Path> changed;
  for (const Path& p : now.Leaves()) {
    const Json* was = old != nullptr ? ValueAt(*old, p) : nullptr;
    const Json* is = ValueAt(object, p);
    if (!before.Contains(p) || was == nullptr || is == nullptr || *was != *is) changed.push_back(p);
  }
  std::vector<Path> removed;
  for (const Path& p : before.Leaves()) {
    if (!now.Contains(p)) removed.push_back(p);
  }
  for (Entry& e : entries) {
    for (const Path& p : changed) e.fields.Erase(p);
    for (const Path& p : removed) e.fields.Erase(p);
  }
  if (!changed.empty()) {
    Entry& mine = EntryFor(entries, manager, "Update", subresource == "status" ? "status" : "");
    for (const Path& p : changed) mine.fields.Insert(p);
    mine.api_version = api_version;
    mine.time = time;
  }
  Store(entries, object);
}

Status RecordApply(const Json* current, const Json& applied, Json& merged, const std::string& manager,
                   const std::string& api_version, bool force, const std::string& time,
                   std::vector<ApplyConflict>* conflicts) {
  std::vector<Entry> entries = EntriesOf(current);
  const FieldSet mine = FieldSet::Of(applied, "");
  const std::vector<Path> leaves = mine.Leaves();
  std::vector<std::pair<Entry*, Path>> taken;
  for (Entry& e : entries) {
    if (e.manager == manager) continue;
    for (const Path& p : leaves) {
      if (!e.fields.Contains(p)) continue;
      const Json* is = current != nullptr ? ValueAt(*current, p) : nullptr;
      const Json* wants = ValueAt(applied, p);
      if (is != nullptr && wants != nullptr && *is == *wants) continue;  // the same value: shared
      taken.emplace_back(&e, p);
    }
  }
  if (!taken.empty() && !force) {
    for (const auto& [e, p] : taken) conflicts->push_back({e->manager, e->api_version, PathText(p), e->operation, e->time, e->subresource});
    return FailedPrecondition("conflict");
  }
  for (auto& [e, p] : taken) e->fields.Erase(p);
  // What the manager applied before and sends no more goes, unless someone else holds it.
  Entry& own = EntryFor(entries, manager, "Apply", "");
  for (const Path& p : own.fields.Leaves()) {
    if (mine.Contains(p)) continue;
    const bool held = std::any_of(entries.begin(), entries.end(),
                                  [&](const Entry& e) { return &e != &own && e.fields.Contains(p); });
    if (!held) EraseAt(merged, p);
  }
  own.fields = mine;
  own.api_version = api_version;
  own.time = time;
  // Its own Update entry gives up what it now applies.
  for (Entry& e : entries) {
    if (e.manager == manager && e.operation == "Update") {
      for (const Path& p : leaves) e.fields.Erase(p);
    }
  }
  Store(entries, merged);
  return Status::Ok();
}

Json ConflictStatus(const std::vector<ApplyConflict>& conflicts, std::string_view kind, std::string_view group,
                    const std::string& name) {
  std::string message = "Apply failed with " + std::to_string(conflicts.size()) + " conflict" +
                        (conflicts.size() == 1 ? "" : "s") + ": ";
  Json causes = Json::array();
  std::string last_manager;
  for (const ApplyConflict& c : conflicts) {
    // The manager as upstream's printManager names it: an Update's entry says which version it
    // wrote, and when; an Apply's only who.
    std::string with = "conflict with \"" + c.manager + "\"";
    if (!c.subresource.empty()) with += " with subresource \"" + c.subresource + "\"";
    if (c.operation == "Update") with += " using " + c.api_version + (c.time.empty() ? "" : " at " + c.time);
    if (conflicts.size() == 1) {
      message += with + ": " + c.field;
    } else {
      if (c.manager != last_manager) message += "\n" + with + ":";
      message += "\n- " + c.field;
    }
    last_manager = c.manager;
    causes.push_back({{"reason", "FieldManagerConflict"}, {"message", with}, {"field", c.field}});
  }
  Json details = {{"name", name}, {"kind", kind}, {"causes", std::move(causes)}};
  if (!group.empty()) details["group"] = group;
  return {{"kind", "Status"},     {"apiVersion", "v1"}, {"metadata", Json::object()}, {"status", "Failure"},
          {"message", message},   {"reason", "Conflict"}, {"details", std::move(details)}, {"code", 409}};
}

}  // namespace arbiter::api
