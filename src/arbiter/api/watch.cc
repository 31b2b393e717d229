// Watches: the initial state from the list cache, then the store's events, each a line of the stream.
#include "arbiter/api/server.h"

#include "arbiter/api/event_versions.h"

#include "arbiter/api/field_validation.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/tables.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using schema::ApiSchema;
using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

bool ApiServer::Selected(const WatchStream& w, const Json& object) {
  return w.labels.MatchesLabels(object) && w.fields.MatchesFields(object);
}

bool ApiServer::Selected(const WatchStream& w, const store::Object& object) {
  // A watch without selectors takes every event: its object's tree is not read (a version held
  // as text, such as a deletion's, is not parsed for it).
  if (w.labels.empty() && w.fields.empty()) return true;
  return Selected(w, *object.body.tree());
}

std::string ApiServer::WatchLine(const WatchStream& w, const store::Event& e) const {
  return WatchLine(w, e.type, e.object, /*shared=*/true);
}

std::string ApiServer::WatchLine(const WatchStream& w, store::EventType type, const store::Object& object,
                                 bool shared) const {
  if (w.as_table) {
    const Json table = ToTable(w.resource, {&*object.body.tree()}, clock_.Now(), w.table_object);
    return Json{{"type", store::EventTypeName(type)}, {"object", table}}.dump() + "\n";
  }
  if (w.protobuf) {
    const Json wire = w.events_v1 ? CoreEventToEventsV1(*object.body.tree()) : *object.body.tree();
    auto encoded = EncodeProtobufObject(wire);
    if (!encoded.ok()) {
      return WatchErrorLine(w, StatusBody(500, "InternalError", "the object has no protobuf form: " + encoded.status().message()));
    }
    return EncodeWatchFrame(store::EventTypeName(type), *encoded);
  }
  if (w.events_v1) {
    return Json{{"type", store::EventTypeName(type)}, {"object", CoreEventToEventsV1(*object.body.tree())}}.dump() + "\n";
  }
  if (!shared) return "{\"type\":\"" + std::string(store::EventTypeName(type)) + "\",\"object\":" + *object.body.shared_text() + "}\n";
  {
    std::lock_guard<std::mutex> lock(lines_mu_);
    if (auto it = lines_.find(LineKey{object.revision, static_cast<int>(type), object.resource, object.ns,
                                      object.name});
        it != lines_.end()) {
      return it->second;
    }
  }
  std::string line = "{\"type\":\"" + std::string(store::EventTypeName(type)) + "\",\"object\":" + *object.body.shared_text() + "}\n";
  std::lock_guard<std::mutex> lock(lines_mu_);
  if (lines_.emplace(LineKey{object.revision, static_cast<int>(type), object.resource, object.ns, object.name},
                     line)
          .second) {
    lines_bytes_ += line.size();
  }
  // Bounded by count and by bytes: 4,096 lines of a 200 KiB object would be 800 MiB.
  while (!lines_.empty() && (lines_.size() > kMaxCachedLines || lines_bytes_ > kMaxCachedLineBytes)) {
    lines_bytes_ -= lines_.begin()->second.size();
    lines_.erase(lines_.begin());
  }
  return line;
}

std::string ApiServer::WatchErrorLine(const WatchStream& w, const Json& status) {
  if (w.protobuf) {
    Json object = status;
    object["apiVersion"] = "v1";
    object["kind"] = "Status";
    if (auto encoded = EncodeProtobufObject(object); encoded.ok()) return EncodeWatchFrame("ERROR", *encoded);
  }
  return Json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
}

Response ApiServer::Watch(const Request& r, const Target& t) {
  auto labels = Selector::ParseLabels(QueryOr(r, "labelSelector"));
  if (!labels.ok()) return Error(400, labels.status().message());
  auto fields = Selector::ParseFields(QueryOr(r, "fieldSelector"), std::string(t.info->resource));
  if (!fields.ok()) return Error(400, fields.status().message());
  auto w = std::make_shared<WatchStream>();
  w->resource = t.info->StoreKey();
  w->events_v1 = Converted(*t.info);
  w->labels = *labels;
  w->fields = *fields;
  w->as_table = WantsTable(r);
  if (w->as_table) {
    const auto include = ParseIncludeObject(QueryOr(r, "includeObject"));
    if (!include) return Error(400, IncludeObjectError(r));
    w->table_object = *include;
  }
  if (auto accept = r.headers.find("accept"); !w->as_table && accept != r.headers.end() &&
                                              IsProtobufMediaType(accept->second)) {
    w->protobuf = ApiSchema::Get().Find(ProtoMessageName(t.info->group, t.info->version, t.info->kind)) != nullptr;
  }
  if (auto ts = QueryOr(r, "timeoutSeconds"); !ts.empty()) {
    const int64_t v = ParseRevision(ts);
    if (v < 0 && ts != "0") return Error(400, "timeoutSeconds \"" + ts + "\" is not a number of seconds");
    // kube-apiserver ends a watch within twice its minimum request timeout (1800 s).
    w->timeout_seconds = std::clamp<int64_t>(v, 1, 3600);
  }
  const std::string rv = QueryOr(r, "resourceVersion");
  int64_t from = ParseRevision(rv);
  if (from < 0 && rv != "0") return Error(400, "resourceVersion \"" + rv + "\" is not a revision");
  if (rv.empty() || rv == "0") {
    // No revision: the current state as ADDED events (from the list cache, read through the
    // selectors' index as a list is), then what follows.
    store::WatchCache::Query q;
    q.ns = t.ns;
    q.index = IndexFor(w->resource, *labels, *fields);
    q.match = [&w](const store::Object& o) { return Selected(*w, o); };
    auto page = ListPage(w->resource, q);
    if (!page.ok()) return Error(page.status());
    w->initial = std::move(page->items);
    from = page->revision;
  }
  if (auto latest = store_.Revision(); latest.ok() && from > *latest) {
    // A revision the store has not reached: kube-apiserver gives up after a short wait with 504
    // ResourceVersionTooLarge rather than hanging; Arbiter answers at once.
    Json body = StatusBody(504, "Timeout", "Too large resource version: " + rv + ", current: " + std::to_string(*latest));
    body["details"] = {{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"},
                                                {"message", "Too large resource version"}}})},
                       {"retryAfterSeconds", 1}};
    return JsonResponse(504, body);
  }
  auto watch = store_.WatchFrom(t.info->StoreKey(), t.ns, from);
  if (!watch.ok()) {
    if (watch.status().code() == StatusCode::kGone) {
      return Error(410, "too old resource version: " + rv + " (" + watch.status().message() + ")");
    }
    return Error(watch.status());
  }
  w->watch = std::move(*watch);
  Response out;
  out.watch = std::move(w);
  return out;
}

}  // namespace arbiter::api
