// The decoded form (manifest::DecodeJson) of stored objects, kept while an object's revision is
// unchanged, so that a pass decodes only what changed. Not thread-safe: one per thread.
//
// A reader that keeps what it needs of a decoded object itself (the live scheduler copies each
// pod into its cache as it admits it) decodes with Decode instead, which keeps nothing: a kept
// decoded form of every pod would be a second copy of each (about 1 KiB of LoadResult and the
// model::Pod beside the scheduler's own; docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "arbiter/manifest/loader.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

class DecodeCache {
 public:
  // Objects are decoded as if read from a file named "PREFIXresource/namespace/name", which is
  // how their problems are named.
  explicit DecodeCache(std::string prefix = "") : prefix_(std::move(prefix)) {}

  // The reference stays valid until this object is decoded again or forgotten.
  const manifest::LoadResult& Get(const store::Object& o) {
    auto& slot = decoded_[{o.resource, o.ns, o.name}];
    if (slot.first != o.revision) {
      slot.first = o.revision;
      slot.second = manifest::DecodeJson(prefix_ + o.resource + "/" + o.ns + "/" + o.name, *o.body.tree());
    }
    return slot.second;
  }
  // The object's decoded form, kept if Get keeps it, else decoded into a slot of its own that the
  // next call of Decode reuses: the reference stays valid until then (or until Get or Forget
  // changes the kept form it returned).
  const manifest::LoadResult& Decode(const store::Object& o) {
    if (auto it = decoded_.find({o.resource, o.ns, o.name}); it != decoded_.end() && it->second.first == o.revision) {
      return it->second.second;
    }
    scratch_ = manifest::DecodeJson(prefix_ + o.resource + "/" + o.ns + "/" + o.name, *o.body.tree());
    return scratch_;
  }
  // The object is gone: its decoded form goes too.
  void Forget(const std::string& resource, const std::string& ns, const std::string& name) {
    decoded_.erase({resource, ns, name});
  }

 private:
  std::string prefix_;
  manifest::LoadResult scratch_;  // Decode's, of an object not kept
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int64_t, manifest::LoadResult>> decoded_;
};

}  // namespace arbiter::controlplane
