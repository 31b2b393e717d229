// The etcd state store: each object is one etcd key, PREFIX/RESOURCE/NAMESPACE/NAME, whose value
// is the JSON body (without metadata.resourceVersion, which is the key's mod_revision and is
// written in on the way out). Writes are compare-and-swap transactions; watches are etcd's own
// watch streams, read line by line in a thread each; Compact compacts etcd. Everything goes
// through etcd's v3 JSON gateway over HTTP (cpp-httplib), where keys and values are base64 and
// int64 fields are strings.
#include "arbiter/store/etcd_internal.h"

namespace arbiter::store {
namespace {

using namespace etcd;  // NOLINT: the etcd store's own parts


class EtcdStore : public Store {
 public:
  EtcdStore(std::shared_ptr<Conn> conn, std::string prefix) : conn_(std::move(conn)), prefix_(std::move(prefix)) {}

  ~EtcdStore() override {
    // Open watches report Unavailable from now on, and their streams end.
    std::lock_guard<std::mutex> lk(watches_mu_);
    for (auto& weak : watches_) {
      if (auto shared = weak.lock()) {
        {
          std::lock_guard<std::mutex> wlk(shared->mu);
          shared->closed = true;
        }
        shared->Finish();
      }
    }
  }

  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    const std::string what = "create " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(value, EncodeBody(resource, ns, name, body));
    Json put = KeyRequest(key);
    put["value"] = value;
    ARBITER_ASSIGN_OR_RETURN(
        r, conn_->Post("/v3/kv/txn",
                       Txn(Compare(key, "CREATE", "EQUAL", "create_revision", 0), Op("request_put", put), Json()),
                       /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return AlreadyExists(DescribeKey(resource, ns, name) + " already exists");
    return Stamped(resource, ns, name, HeaderRevision(r), std::move(body));
  }

  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    const std::string what = "read " + DescribeKey(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", KeyRequest(Key(resource, ns, name)), true, what));
    const Json& kv = Element(Field(r, "kvs"), 0);
    if (kv.is_null()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    return ToObject(resource, ns, name, kv, Int(Field(kv, "mod_revision")));
  }

  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    const std::string what = "update " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(value, EncodeBody(resource, ns, name, body));
    Json put = KeyRequest(key);
    put["value"] = value;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/txn",
                                            Txn(Condition(key, expected_revision), Op("request_put", put),
                                                Op("request_range", KeyRequest(key))),
                                            /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return Refused("update", resource, ns, name, r, expected_revision);
    return Stamped(resource, ns, name, HeaderRevision(r), std::move(body));
  }

  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    const std::string what = "delete " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    Json del = KeyRequest(key);
    del["prev_kv"] = true;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/txn",
                                            Txn(Condition(key, expected_revision), Op("request_delete_range", del),
                                                Op("request_range", KeyRequest(key))),
                                            /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return Refused("delete", resource, ns, name, r, expected_revision);
    const Json& prev =
        Element(Field(Field(Element(Field(r, "responses"), 0), "response_delete_range"), "prev_kvs"), 0);
    if (prev.is_null()) {
      return Internal("cannot " + what + ": etcd deleted it at revision " + std::to_string(HeaderRevision(r)) +
                      " but did not return its last value");
    }
    return ToObject(resource, ns, name, prev, HeaderRevision(r));
  }

  // Apply is the interface's: one transaction per op, in order. Each write has a revision of its
  // own, as every write through kube-apiserver does. Ops batched into one transaction would share
  // its revision, and a client whose watch broke between two events of one revision, resuming
  // from the first one's resourceVersion as informers do, would never see the second
  // (docs/consistency.md: upstream/cmd/lincheck found it).

  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override {
    if (resource.empty()) return InvalidArgument("a list needs a resource (such as \"pods\")");
    ARBITER_RETURN_IF_ERROR(CheckNames(resource, ns));
    const std::string what = "list " + resource + (ns.empty() ? "" : " in namespace \"" + ns + "\"");
    const std::string start = ns.empty() ? ResourcePrefix(resource) : NamespacePrefix(resource, ns);
    const std::string end = PrefixEnd(start);
    // Pages of one revision. Should etcd compact that revision between two pages, start over.
    StatusOr<ListResult> result = Internal("cannot " + what + ": not attempted");
    for (int attempt = 0; attempt < 3; ++attempt) {
      result = ListPages(resource, start, end, what);
      if (result.ok() || result.status().code() != StatusCode::kGone) break;
    }
    return result;
  }

  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions options = {}) override {
    if (resource.empty()) return InvalidArgument("a watch needs a resource (such as \"pods\")");
    if (from_revision < 0) {
      return InvalidArgument("cannot watch " + resource + " from revision " + std::to_string(from_revision) +
                             ": revisions are not negative");
    }
    ARBITER_RETURN_IF_ERROR(CheckNames(resource, ns));
    WatchSpec spec;
    spec.resource = resource;
    spec.ns = ns;
    spec.resource_prefix = ResourcePrefix(resource);
    spec.key = ns.empty() ? spec.resource_prefix : NamespacePrefix(resource, ns);
    spec.from = from_revision;
    spec.deleted_bodies = options.deleted_bodies;

    // A range at the revision itself fails exactly when etcd compacted past it: the cheap way to
    // answer Gone here rather than at the first Next.
    const std::string what = "watch " + resource + " from revision " + std::to_string(from_revision);
    Json probe = KeyRequest(spec.key);
    probe["range_end"] = Base64Encode(PrefixEnd(spec.key));
    probe["count_only"] = true;
    probe["revision"] = std::to_string(std::max<int64_t>(from_revision, 1));
    bool compacted = false;
    if (auto r = conn_->Post("/v3/kv/range", probe, true, what); !r.ok()) {
      if (r.status().code() == StatusCode::kGone) {
        compacted = true;
      } else if (r.status().code() != StatusCode::kOutOfRange) {  // a future revision is fine
        return r.status();
      }
    }

    auto shared = std::make_shared<WatchShared>();
    auto watch = NewEtcdWatch(conn_, shared, std::move(spec));
    {
      std::lock_guard<std::mutex> lk(watches_mu_);
      watches_.erase(std::remove_if(watches_.begin(), watches_.end(), [](const auto& w) { return w.expired(); }),
                     watches_.end());
      watches_.push_back(shared);
    }
    watch->Start();
    if (!compacted) return std::unique_ptr<Watch>(std::move(watch));

    // etcd's stream tells the compaction revision, for the message.
    auto [terminal, compact_revision] = watch->AwaitTerminal(conn_->timeout());
    watch->Stop();
    std::string m = "cannot watch " + resource + " from revision " + std::to_string(from_revision) + ": ";
    if (compact_revision > 0) {
      m += "the history up to revision " + std::to_string(compact_revision) +
           " is no longer kept (the oldest available revision is " + std::to_string(compact_revision + 1) + ")";
    } else {
      m += "etcd has compacted the history after it";
      if (terminal && terminal->code() != StatusCode::kGone) m += " (" + terminal->message() + ")";
    }
    return Gone(m + "; list again and watch from the list's revision");
  }

  StatusOr<int64_t> Revision() override {
    Json req = KeyRequest(prefix_ + "/");
    req["count_only"] = true;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", req, true, "read the etcd revision"));
    return HeaderRevision(r);
  }

  Status Compact(int64_t revision) override {
    auto latest = Revision();
    if (!latest.ok()) return latest.status();
    ARBITER_RETURN_IF_ERROR(ValidateCompact(revision, *latest));
    if (revision == 0) return Status::Ok();
    Json req = Json::object();
    req["revision"] = std::to_string(revision);
    req["physical"] = true;
    auto r = conn_->Post("/v3/kv/compaction", req, true, "compact etcd to revision " + std::to_string(revision));
    if (r.ok()) return Status::Ok();
    if (r.status().code() == StatusCode::kGone) return Status::Ok();  // already compacted past it
    return r.status();
  }

 private:
  std::string ResourcePrefix(const std::string& resource) const { return prefix_ + "/" + resource + "/"; }
  std::string NamespacePrefix(const std::string& resource, const std::string& ns) const {
    return ResourcePrefix(resource) + ns + "/";
  }
  std::string Key(const std::string& resource, const std::string& ns, const std::string& name) const {
    return NamespacePrefix(resource, ns) + name;
  }

  // A resource or namespace with '/' would make keys ambiguous.
  static Status CheckNames(const std::string& resource, const std::string& ns) {
    if (resource.find('/') != std::string::npos) {
      return InvalidArgument("the etcd store cannot hold resource \"" + resource + "\": it contains '/'");
    }
    if (ns.find('/') != std::string::npos) {
      return InvalidArgument("the etcd store cannot hold objects of " + resource + " in namespace \"" + ns +
                             "\": it contains '/'");
    }
    return Status::Ok();
  }

  static Status CheckKey(const std::string& resource, const std::string& ns, const std::string& name) {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    return CheckNames(resource, ns);
  }

  // The value stored for `body`: its JSON without metadata.resourceVersion, in base64.
  static StatusOr<std::string> EncodeBody(const std::string& resource, const std::string& ns, const std::string& name,
                                          Json& body) {
    if (auto m = body.find("metadata"); m != body.end() && m->is_object()) m->erase("resourceVersion");
    try {
      return Base64Encode(body.dump());
    } catch (const Json::exception& e) {
      return InvalidArgument("the body of " + DescribeKey(resource, ns, name) + " cannot be stored: " + e.what());
    }
  }

  static Object Stamped(const std::string& resource, const std::string& ns, const std::string& name,
                        int64_t revision, Json body) {
    StampRevision(body, revision);
    return Object{resource, ns, name, revision, std::move(body)};
  }

  // The compare of an update or delete: the object is at `expected` (when > 0), or exists.
  static Json Condition(const std::string& key, int64_t expected) {
    return expected > 0 ? Compare(key, "MOD", "EQUAL", "mod_revision", expected)
                        : Compare(key, "CREATE", "GREATER", "create_revision", 0);
  }

  // Why a conditional update or delete was refused, from the range of its failure branch.
  static Status Refused(const char* op, const std::string& resource, const std::string& ns, const std::string& name,
                        const Json& r, int64_t expected) {
    const Json& kv = Element(Field(Field(Element(Field(r, "responses"), 0), "response_range"), "kvs"), 0);
    if (kv.is_null()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    const Object current{resource, ns, name, Int(Field(kv, "mod_revision")), Json()};
    ARBITER_RETURN_IF_ERROR(CheckExpectedRevision(op, current, expected));
    return Internal(std::string("cannot ") + op + " " + DescribeKey(resource, ns, name) +
                    ": etcd refused the write although the object is at revision " +
                    std::to_string(current.revision));
  }

  // The object of an etcd key-value at `revision`.
  StatusOr<Object> ToObject(const std::string& resource, const std::string& ns, const std::string& name,
                            const Json& kv, int64_t revision) const {
    auto value = Base64Decode(Text(Field(kv, "value")));
    Json body = value ? Json::parse(*value, nullptr, /*allow_exceptions=*/false) : Json();
    if (!value || body.is_discarded() || !ValidateBody(resource, ns, name, body).ok()) {
      return Internal("etcd store " + prefix_ + ": the stored value of " + DescribeKey(resource, ns, name) +
                      " is not a JSON object (was the key written by something else?)");
    }
    return Stamped(resource, ns, name, revision, std::move(body));
  }

  StatusOr<ListResult> ListPages(const std::string& resource, const std::string& start, const std::string& end,
                                 const std::string& what) {
    const std::string resource_prefix = ResourcePrefix(resource);
    ListResult out;
    std::string from = start;
    for (;;) {
      Json req = KeyRequest(from);
      req["range_end"] = Base64Encode(end);
      req["limit"] = std::to_string(kListPage);
      if (out.revision > 0) req["revision"] = std::to_string(out.revision);
      ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", req, true, what));
      if (out.revision == 0) out.revision = HeaderRevision(r);
      const Json& kvs = Field(r, "kvs");
      std::string last;
      if (kvs.is_array()) {
        for (const Json& kv : kvs) {
          auto key = Base64Decode(Text(Field(kv, "key")));
          if (!key) return Internal("cannot " + what + ": etcd returned a key that is not base64");
          last = *key;
          if (key->compare(0, resource_prefix.size(), resource_prefix) != 0) continue;
          const std::string rest = key->substr(resource_prefix.size());
          const size_t slash = rest.find('/');
          if (slash == std::string::npos) continue;  // not of the store's layout
          auto o = ToObject(resource, rest.substr(0, slash), rest.substr(slash + 1), kv, Int(Field(kv, "mod_revision")));
          if (!o.ok()) return o.status();
          out.items.push_back(std::move(*o));
        }
      }
      if (!Bool(Field(r, "more")) || last.empty()) break;
      from = last + std::string(1, '\0');
    }
    // etcd orders by key bytes, where "a-b/" comes before "a/": sort by namespace, then name.
    std::sort(out.items.begin(), out.items.end(),
              [](const Object& a, const Object& b) { return std::tie(a.ns, a.name) < std::tie(b.ns, b.name); });
    return out;
  }

  const std::shared_ptr<Conn> conn_;
  const std::string prefix_;
  std::mutex watches_mu_;
  std::vector<std::weak_ptr<WatchShared>> watches_;
};

}  // namespace

StatusOr<std::unique_ptr<Store>> OpenEtcdStore(const EtcdOptions& options) {
  EtcdOptions o = options;
  if (o.endpoints.empty()) {
    return InvalidArgument("the etcd store needs at least one endpoint (such as http://127.0.0.1:2379)");
  }
  for (auto& e : o.endpoints) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0) {
      return InvalidArgument("etcd endpoint \"" + e + "\" is not an http:// or https:// URL");
    }
  }
  if (o.request_timeout <= Millis(0)) {
    return InvalidArgument("the etcd request timeout must be positive, not " +
                           std::to_string(o.request_timeout.count()) + " ms");
  }
  std::string prefix = o.prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  auto store = std::make_unique<EtcdStore>(std::make_shared<Conn>(std::move(o)), prefix);
  // Reach etcd once, so that a wrong endpoint shows at open.
  auto revision = store->Revision();
  if (!revision.ok()) {
    return Status(revision.status().code(), "cannot open the etcd store at prefix \"" + prefix +
                                                "\": " + revision.status().message());
  }
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace arbiter::store
