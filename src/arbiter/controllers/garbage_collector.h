// The garbage collector (kube-controller-manager's garbage-collector-controller), following
// upstream's attemptToDeleteItem and the orphan and foreground finalizers:
//
//   * It keeps a graph of the objects of the resources it watches, by uid, with each object's
//     owner references.
//   * A dependent none of whose owners exists any more (the uid is gone, or the name now holds
//     another uid — confirmed by a read through the API, so that an owner the informers have not
//     yet seen never counts as gone) is deleted: in the foreground when an owner waits for its
//     dependents' deletion, else in the background. References to owners that are gone are
//     removed from a dependent that keeps a live owner.
//   * An owner deleted with propagationPolicy Foreground carries foregroundDeletion: its
//     dependents are deleted first, and the finalizer goes (deleting the owner) once no
//     dependent that blocks its deletion (blockOwnerDeletion) remains.
//   * An owner deleted with propagationPolicy Orphan carries orphan: the references to it are
//     removed from its dependents, then the finalizer.
// Background deletion (kubectl's default) deletes the owner at once; the dependents follow.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class GarbageCollector final : public Controller {
 public:
  std::string_view Name() const override { return "garbage-collector-controller"; }
  std::vector<std::string> Watches() const override;
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override;

 private:
  struct Node {  // an object of the graph
    std::string resource;
    Key key;
    std::string uid;
    std::vector<std::string> owners;  // owner uids
  };
  using Ref = std::pair<std::string, Key>;  // (resource, key)
  // Whether `owner` may own an object of `dependent_ns` ("" for a cluster-scoped dependent): a
  // cluster-scoped owner may own anything, a namespaced one only its own namespace's objects.
  static bool OwnerMayOwn(const Ref& owner, const std::string& dependent_ns);

  void Observe(const std::string& resource, const Key& key, const store::Object* o, Timestamp now);
  Status Process(Context& ctx, const Ref& ref);
  // Whether the owner named by `owner_ref` (of a dependent in `ns`) is gone: absent, or its
  // name holds another uid.
  StatusOr<bool> OwnerGone(Context& ctx, const Json& owner_ref, const std::string& ns) const;
  const store::Object* Lookup(Context& ctx, const Ref& ref) const;

  std::map<std::string, Ref> by_uid_;              // every object of the graph by uid
  std::map<Ref, Node> nodes_;                      // and by where it is
  std::map<std::string, std::set<Ref>> dependents_;  // owner uid -> its dependents
  BasicWorkQueue<Ref> queue_;
};

}  // namespace arbiter::controllers
