// Lists: read from a watch cache per resource (store/watch_cache.h), paged with limit and
// continue as kube-apiserver pages them, and written item by item.
//
// Upstream's rules, as its cacher applies them (k8s.io/apiserver storage/cacher):
// * resourceVersion "" is a consistent read of the latest state; "0" any recent state (here also
//   the latest); N with resourceVersionMatch NotOlderThan (or none, without a limit) the latest,
//   which must have reached N; N with Exact (or none, with a limit: the legacy exact match) the
//   state at N, 410 Expired once it is no longer kept.
// * A continue token holds the revision of the first page and the storage key after the last
//   item; the following pages are read at that revision. A token whose revision is no longer
//   kept gets 410 Expired with a token (revision -1) that continues at the latest state instead.
// * A page with `limit` items carries a continue token when any object follows, matching or not,
//   and, for a list without selectors, remainingItemCount: how many objects follow.
#include <charconv>
#include <cstring>

#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/api/field_validation.h"
#include "arbiter/api/tables.h"
#include "arbiter/base/base64.h"
#include "arbiter/base/json_text.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

namespace {

// A list this long is written as it is encoded, a chunk at a time, so that the memory one
// request holds is its chunk and a pointer per item, whatever the list's size.
constexpr size_t kStreamedItems = 500;
constexpr size_t kChunkBytes = size_t{256} << 10;

// The message of upstream's 410 for a continue token whose revision is no longer kept
// (k8s.io/apiserver storage/etcd3 errors.go, inconsistentContinue).
constexpr const char* kInconsistentContinue =
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.";

// A continue token, as upstream's storage.EncodeContinue writes it: base64url (unpadded) of
// {"v":"meta.k8s.io/v1","rv":REVISION,"start":KEY}, KEY the storage key below the list's prefix
// at which the next page starts ("ns/name\0" for a list of every namespace, "name\0" within one).
std::string EncodeContinue(const std::string& start, int64_t revision) {
  return base::Base64UrlEncode(Json{{"v", "meta.k8s.io/v1"}, {"rv", revision}, {"start", start}}.dump());
}

std::string StartAfter(const store::ObjectPtr& last, const std::string& list_ns) {
  std::string key = list_ns.empty() && !last->ns.empty() ? last->ns + "/" + last->name : last->name;
  key.push_back('\0');
  return key;
}

struct ContinueToken {
  int64_t revision = 0;  // -1: continue at the latest state
  std::string start;
};

// storage.DecodeContinue's checks and messages, path traversal included.
StatusOr<ContinueToken> DecodeContinue(const std::string& value) {
  constexpr const char* kInvalid = "continue key is not valid";
  const std::optional<std::string> raw = base::Base64Decode(value);
  if (!raw) return InvalidArgument(std::string(kInvalid) + ": illegal base64 data");
  const Json token = Json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!token.is_object()) return InvalidArgument(std::string(kInvalid) + ": not a JSON object");
  const Json* v = token.contains("v") ? &token["v"] : nullptr;
  const std::string version = v != nullptr && v->is_string() ? v->get<std::string>() : "";
  if (version != "meta.k8s.io/v1") {
    return InvalidArgument(std::string(kInvalid) + ": server does not recognize this encoded version " + version);
  }
  ContinueToken out;
  if (token.contains("rv") && token["rv"].is_number_integer()) out.revision = token["rv"].get<int64_t>();
  if (out.revision == 0) {
    return InvalidArgument(std::string(kInvalid) + ": incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
  if (token.contains("start") && token["start"].is_string()) out.start = token["start"].get<std::string>();
  if (out.start.empty()) return InvalidArgument(std::string(kInvalid) + ": encoded start key empty (version meta.k8s.io/v1)");
  // A start key must name a place below the list's prefix: upstream refuses any key that Go's
  // path.Clean would change, that is one with an empty, "." or ".." segment.
  if (out.start.front() == '/') out.start.erase(0, 1);
  size_t begin = 0;
  while (true) {
    const size_t slash = out.start.find('/', begin);
    const std::string_view segment(out.start.data() + begin, (slash == std::string::npos ? out.start.size() : slash) - begin);
    if (segment.empty() || segment == "." || segment == "..") return InvalidArgument(std::string(kInvalid) + ": " + out.start);
    if (slash == std::string::npos) break;
    begin = slash + 1;
  }
  return out;
}

// The first key a continue token's start names, in the list's own terms.
store::WatchCache::Key FromKey(const std::string& start, const std::string& list_ns, bool namespaced) {
  if (!list_ns.empty() || !namespaced) return {list_ns, start};
  const size_t slash = start.find('/');
  if (slash == std::string::npos) return {start, ""};
  return {start.substr(0, slash), start.substr(slash + 1)};
}

// kube-apiserver's 422 for invalid ListOptions.
Response InvalidListOptions(const std::string& error) {
  const std::string message = "ListOptions.meta.k8s.io \"\" is invalid: " + error;
  return JsonResponse(422, InvalidStatusBody(message, "ListOptions", "meta.k8s.io", "", FieldErrorsOf(message)));
}

Response TooLarge(const std::string& asked, int64_t current) {
  Json body = StatusBody(504, "Timeout", "Timeout: Too large resource version: " + asked + ", current: " + std::to_string(current));
  body["details"] = {{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"}, {"message", "Too large resource version"}}})},
                     {"retryAfterSeconds", 1}};
  return JsonResponse(504, body);
}

// One item of a list as upstream encodes it: the object without kind and apiVersion (the list's
// say them), written straight from the shared object, which is never copied.
void AppendItem(std::string& out, const Json& object) {
  // nlohmann's serializer, appending to `out` (dump() would make a string per field).
  nlohmann::detail::serializer<Json> write(nlohmann::detail::output_adapter<char, std::string>(out), ' ');
  out += '{';
  bool first = true;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == "kind" || it.key() == "apiVersion") continue;
    if (!first) out += ',';
    first = false;
    write.dump(Json(it.key()), false, false, 0);
    out += ':';
    write.dump(it.value(), false, false, 0);
  }
  out += '}';
}

using base::json_text::EndOfValue;

// AppendItem from the version's own text (store::Body::text(), the same serializer's output):
// its members copied but kind and apiVersion, without a tree. False (nothing appended) when the
// text is not a compact JSON object.
bool AppendItemText(std::string& out, std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  const size_t start = out.size();
  out += '{';
  bool first = true;
  size_t at = 1;
  while (at < text.size() - 1) {
    const size_t key_end = EndOfValue(text, at);
    if (key_end == std::string_view::npos || key_end >= text.size() || text[at] != '"' || text[key_end] != ':') {
      out.resize(start);
      return false;
    }
    const size_t value_end = EndOfValue(text, key_end + 1);
    if (value_end == std::string_view::npos || value_end >= text.size()) {
      out.resize(start);
      return false;
    }
    const std::string_view key = text.substr(at, key_end - at);
    if (key != "\"kind\"" && key != "\"apiVersion\"") {
      if (!first) out += ',';
      first = false;
      out.append(text.substr(at, value_end - at));
    }
    at = value_end + (text[value_end] == ',' ? 1 : 0);
  }
  out += '}';
  return true;
}

// Writes a page's items a chunk at a time: `head`, the items (each by `item`), then `tail`.
std::shared_ptr<TextStream> ChunkedItems(std::string head, std::vector<store::ObjectPtr> items, std::string tail,
                                         std::function<void(std::string&, const store::Object&)> item) {
  struct State {
    std::vector<store::ObjectPtr> items;
    size_t next = 0;
    std::string head, tail;
    bool started = false, done = false;
    std::function<void(std::string&, const store::Object&)> item;
  };
  auto state = std::make_shared<State>();
  state->items = std::move(items);
  state->head = std::move(head);
  state->tail = std::move(tail);
  state->item = std::move(item);
  auto stream = std::make_shared<TextStream>();
  stream->keep_alive = true;
  stream->next = [state]() -> std::optional<std::string> {
    if (state->done) return std::nullopt;
    std::string chunk;
    chunk.reserve(kChunkBytes + (kChunkBytes >> 2));  // one allocation per chunk, not a doubling series
    if (!state->started) {
      chunk = std::move(state->head);
      state->started = true;
    }
    while (state->next < state->items.size() && chunk.size() < kChunkBytes) {
      if (state->next > 0) chunk += ',';
      state->item(chunk, *state->items[state->next]);
      state->items[state->next].reset();  // what has been written need not be held
      ++state->next;
    }
    if (state->next == state->items.size()) {
      chunk += state->tail;
      state->done = true;
    }
    return chunk;
  };
  return stream;
}

}  // namespace

namespace internal {

std::optional<std::pair<std::string, std::string>> IndexFor(const std::string& resource, const Selector& labels,
                                                            const Selector& fields) {
  if (resource == "pods") {
    if (auto node = fields.Pinned("spec.nodeName")) return std::pair<std::string, std::string>{"spec.nodeName", *node};
    if (auto phase = fields.Pinned("status.phase")) return std::pair<std::string, std::string>{"status.phase", *phase};
  }
  if (auto label = labels.FirstPinned()) return std::pair<std::string, std::string>{"labels", *label};
  return std::nullopt;
}

}  // namespace internal

bool ReadsCollection(const Request& r) {
  if (r.method != "GET") return false;
  std::vector<std::string_view> s;
  for (size_t at = 0; at < r.path.size();) {
    const size_t slash = std::min(r.path.find('/', at), r.path.size());
    if (slash > at) s.emplace_back(r.path.data() + at, slash - at);
    at = slash + 1;
  }
  size_t rest = 0;
  if (s.size() >= 2 && s[0] == "api") {
    rest = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    rest = 3;
  } else {
    return false;
  }
  if (rest < s.size() && s[rest] == "watch") ++rest;
  const size_t n = s.size() - rest;
  return n == 1 || (n == 3 && s[rest] == "namespaces");
}

store::WatchCache& ApiServer::ListCache(const std::string& resource) {
  std::lock_guard<std::mutex> lock(caches_mu_);
  auto& cache = caches_[resource];
  if (cache) return *cache;
  // The history for continue tokens is timed by the server's clock (injected: tests move it).
  store::WatchCache::Options options;
  options.now_millis = [this] { return clock_.Now() / kMillisecond; };
  cache = std::make_unique<store::WatchCache>(store_, resource, std::move(options));
  // The selectors clients use to narrow lists (policy, here; the cache only holds the entries).
  (void)cache->AddIndex("labels", [](const store::Object& o) {
    std::vector<std::string> out;
    const Json* labels = nullptr;
    const store::Body::Tree tree = o.body.tree();  // `labels` points into it
    if (auto m = tree->find("metadata"); m != tree->end() && m->is_object()) {
      if (auto l = m->find("labels"); l != m->end() && l->is_object()) labels = &*l;
    }
    if (labels == nullptr) return out;
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (it.value().is_string()) out.push_back(it.key() + "=" + it.value().get<std::string>());
    }
    return out;
  });
  if (resource == "pods") {
    for (const char* field : {"spec.nodeName", "status.phase"}) {
      (void)cache->AddIndex(field, [field](const store::Object& o) {
        return std::vector<std::string>{SelectableField(*o.body.tree(), field)};
      });
    }
  }
  if (syncer_.joinable()) {
    cache->SetNotifier([this, resource] {
      {
        std::lock_guard<std::mutex> pending_lock(syncer_mu_);
        syncer_pending_.insert(resource);
      }
      syncer_cv_.notify_one();
    });
  }
  return *cache;
}

Status ApiServer::PrepareListCaches(const std::vector<std::string>& resources) {
  if (!store_.WatchIsSynchronous()) return Status::Ok();  // lists read the store itself
  for (const std::string& resource : resources) {
    if (Status s = ListCache(resource).Sync(); !s.ok()) return Status(s.code(), "the list cache of " + resource + ": " + s.message());
  }
  return Status::Ok();
}

void ApiServer::SyncListCaches() {
  std::unique_lock<std::mutex> lock(syncer_mu_);
  while (!syncer_stop_) {
    // Woken by news, and once a second regardless, so that old versions age out of a quiet cache.
    syncer_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return syncer_stop_ || !syncer_pending_.empty(); });
    if (syncer_stop_) break;
    syncer_pending_.clear();
    lock.unlock();
    std::vector<store::WatchCache*> caches;
    {
      std::lock_guard<std::mutex> caches_lock(caches_mu_);
      for (auto& [resource, cache] : caches_) caches.push_back(cache.get());
    }
    // A cache that cannot sync (the store is down) says so to the next list, which tries again.
    for (store::WatchCache* cache : caches) (void)cache->Sync();
    lock.lock();
  }
}

StatusOr<store::WatchCache::Page> ApiServer::ListPage(const std::string& resource, const store::WatchCache::Query& q) {
  if (store_.WatchIsSynchronous()) return ListCache(resource).List(q);
  // A store whose watch cannot tell it is current (etcd) is listed itself: pages at the latest
  // state, whatever revision a continue token holds.
  auto listed = store_.List(resource, q.ns);
  if (!listed.ok()) return listed.status();
  store::ListResult& list = *listed;
  if (q.min_revision > list.revision || q.revision > list.revision) {
    return OutOfRange("revision " + std::to_string(std::max(q.min_revision, q.revision)) + " is later than the store's " +
                      std::to_string(list.revision));
  }
  std::vector<store::ObjectPtr> items;
  items.reserve(list.items.size());
  for (store::Object& o : list.items) items.push_back(std::make_shared<const store::Object>(std::move(o)));
  return store::PageOf(items, list.revision, q);
}

Response ApiServer::List(const Request& r, const Target& t) {
  auto labels = Selector::ParseLabels(QueryOr(r, "labelSelector"));
  if (!labels.ok()) return Error(400, labels.status().message());
  const std::string resource(t.info->StoreKey());
  auto fields = Selector::ParseFields(QueryOr(r, "fieldSelector"), resource);
  if (!fields.ok()) return Error(400, fields.status().message());
  store::WatchCache::Query q;
  q.ns = t.ns;
  if (const std::string limit = QueryOr(r, "limit"); !limit.empty()) {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), n);
    if (ec != std::errc() || end != limit.data() + limit.size() || n < 0) {
      // kube-apiserver's conversion error for an integer query parameter; a negative limit
      // is a bad request here too (upstream reads it as no limit).
      return Error(400, "strconv.ParseInt: parsing " + Json(limit).dump() + ": invalid syntax");
    }
    q.limit = static_cast<size_t>(n);
  }
  // ListOptions, validated as upstream's ValidateListOptions does.
  const std::string rv = QueryOr(r, "resourceVersion");
  const std::string match = QueryOr(r, "resourceVersionMatch");
  const std::string token_text = QueryOr(r, "continue");
  if (!match.empty() && match != "Exact" && match != "NotOlderThan") {
    return InvalidListOptions("resourceVersionMatch: Unsupported value: " + Json(match).dump() +
                              ": supported values: \"Exact\", \"NotOlderThan\"");
  }
  if (!match.empty() && rv.empty()) {
    return InvalidListOptions("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
  }
  if (!token_text.empty() && !rv.empty() && rv != "0") {
    return InvalidListOptions("resourceVersion: Forbidden: specifying resource version is not allowed when using continue");
  }
  if (match == "Exact" && rv == "0") {
    return InvalidListOptions("resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
  }
  if (!match.empty() && !token_text.empty()) {
    return InvalidListOptions("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided");
  }
  std::optional<ContinueToken> token;
  if (!token_text.empty()) {
    auto decoded = DecodeContinue(token_text);
    if (!decoded.ok()) return Error(400, "invalid continue token: " + decoded.status().message());
    token = *decoded;
    q.from = FromKey(token->start, t.ns, t.info->namespaced);
    if (token->revision > 0) q.revision = token->revision;
  } else if (!rv.empty() && rv != "0") {
    const int64_t want = ParseRevision(rv);
    if (want < 0) return Error(400, "resourceVersion \"" + rv + "\" is not a revision");
    if (match == "Exact" || (match.empty() && q.limit > 0)) {
      q.revision = want;
    } else {
      q.min_revision = want;
    }
  }
  q.index = IndexFor(resource, *labels, *fields);
  // A selector of one requirement that the index entry is (IndexFor picked it) needs no match.
  q.index_decides = q.index.has_value() && labels->size() + fields->size() == 1;
  const bool selected = !labels->empty() || !fields->empty();
  if (selected) {
    q.match = [&labels = *labels, &fields = *fields](const store::Object& o) {
      return labels.MatchesLabels(*o.body.tree()) && fields.MatchesFields(*o.body.tree());
    };
  }
  auto page = ListPage(resource, q);
  if (!page.ok()) {
    if (page.status().code() == StatusCode::kGone) {
      if (token) {
        Json body = StatusBody(410, "Expired", kInconsistentContinue);
        body["metadata"]["continue"] = EncodeContinue(token->start, -1);
        return JsonResponse(410, body);
      }
      return Error(410, "too old resource version: " + rv);
    }
    if (page.status().code() == StatusCode::kOutOfRange) {
      auto current = store_.Revision();
      return TooLarge(rv, current.ok() ? *current : 0);
    }
    return Error(page.status());
  }
  Json meta = {{"resourceVersion", std::to_string(page->revision)}};
  if (page->more && !page->items.empty()) {
    meta["continue"] = EncodeContinue(StartAfter(page->items.back(), t.ns), page->revision);
    if (!selected) meta["remainingItemCount"] = page->remaining;
  }
  const Timestamp now = clock_.Now();
  if (WantsTable(r)) {
    const auto include = ParseIncludeObject(QueryOr(r, "includeObject"));
    if (!include) return Error(400, IncludeObjectError(r));
    Json table = ToTable(resource, {}, now, *include);
    table["metadata"] = meta;
    const std::string whole = table.dump();
    const std::string rows = "\"rows\":[";
    const size_t at = whole.find(rows);
    if (at == std::string::npos) return Error(500, "the table of " + resource + " has no rows");
    std::string head = whole.substr(0, at + rows.size());
    std::string tail = whole.substr(at + rows.size());
    const TableObject table_object = *include;
    auto row = [resource, now, table_object](std::string& out, const store::Object& o) {
      const Json one = ToTable(resource, {&*o.body.tree()}, now, table_object, /*with_column_definitions=*/false);
      const Json& rows_of_one = one["rows"];
      for (size_t i = 0; i < rows_of_one.size(); ++i) {
        if (i > 0) out += ',';
        out += rows_of_one[i].dump();
      }
    };
    Response out;
    out.body = std::move(head);
    if (page->items.size() > kStreamedItems) {
      out.stream = ChunkedItems("", std::move(page->items), std::move(tail), row);
      return out;
    }
    for (size_t i = 0; i < page->items.size(); ++i) {
      if (i > 0) out.body += ',';
      row(out.body, *page->items[i]);
    }
    out.body += tail;
    return out;
  }
  const bool events_v1 = Converted(*t.info);
  // An item is the version's own text less kind and apiVersion (no tree is read); a converted
  // one (events.k8s.io/v1) is encoded once per version while clients keep listing it
  // (encoding_cache.h).
  auto item = [this, events_v1](std::string& out, const store::Object& o) {
    if (!events_v1 && AppendItemText(out, *o.body.shared_text())) return;
    out += *encodings_.Get(o, events_v1 ? 1 : 0, [&](std::string& text) {
      if (events_v1) {
        AppendItem(text, CoreEventToEventsV1(*o.body.tree()));
      } else {
        AppendItem(text, *o.body.tree());
      }
    });
  };
  // Protobuf, when the client prefers it and the kind has a form: encoded whole.
  if (auto accept = r.headers.find("accept"); accept != r.headers.end() && IsProtobufMediaType(accept->second)) {
    Json list = {{"kind", std::string(t.info->kind) + "List"}, {"apiVersion", t.info->ApiVersion()}, {"metadata", meta},
                 {"items", Json::array()}};
    for (const store::ObjectPtr& o : page->items) {
      Json one = events_v1 ? CoreEventToEventsV1(*o->body.tree()) : *o->body.tree();
      one.erase("kind");
      one.erase("apiVersion");
      list["items"].push_back(std::move(one));
    }
    if (auto encoded = EncodeProtobufObject(list); encoded.ok()) {
      Response out;
      out.content_type = std::string(kProtobufMediaType);
      out.body = std::move(*encoded);
      return out;
    }
    return JsonResponse(200, list);
  }
  std::string head = "{\"kind\":" + Json(std::string(t.info->kind) + "List").dump() +
                     ",\"apiVersion\":" + Json(t.info->ApiVersion()).dump() + ",\"metadata\":" + meta.dump() +
                     ",\"items\":[";
  Response out;
  if (page->items.size() > kStreamedItems) {
    out.stream = ChunkedItems(std::move(head), std::move(page->items), "]}", item);
    return out;
  }
  out.body = std::move(head);
  for (size_t i = 0; i < page->items.size(); ++i) {
    if (i > 0) out.body += ',';
    item(out.body, *page->items[i]);
  }
  out.body += "]}";
  return out;
}

}  // namespace arbiter::api
