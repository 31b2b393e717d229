// The decoded form (manifest::DecodeJson) of stored objects, kept while an object's revision is
// unchanged, so that a pass decodes only what changed. Not thread-safe: one per thread.
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
  // The object is gone: its decoded form goes too.
  void Forget(const std::string& resource, const std::string& ns, const std::string& name) {
    decoded_.erase({resource, ns, name});
  }

 private:
  std::string prefix_;
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int64_t, manifest::LoadResult>> decoded_;
};

}  // namespace arbiter::controlplane
