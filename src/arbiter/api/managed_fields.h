// Server-side apply's field ownership, as kube-apiserver's field manager keeps it in
// metadata.managedFields:
//   * every write names a manager (the fieldManager query parameter, else the client's
//     User-Agent up to its first '/'); a create, update or patch makes the fields it set or
//     changed its manager's (operation Update) and no one else's;
//   * an apply (application/apply-patch+yaml, fieldManager required) owns exactly the fields of
//     the configuration it sends (operation Apply): a field another manager owns whose value the
//     apply would change is a conflict, refused with 409 and one cause per field unless
//     force=true, which takes the field over; a field the manager applied before and no longer
//     sends is removed from the object unless another manager owns it too;
//   * fields are named as upstream's FieldsV1: `f:NAME` for a field or map key, `k:{"KEY":V}` for
//     an element of a list merged by key (patch.h's merge keys), `.` for the element itself;
//     other lists are atomic (one field). Identity and server-set metadata, apiVersion and kind
//     are nobody's; status belongs to writes of the status subresource.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"
#include "arbiter/base/status.h"

namespace arbiter::api {

// A set of fields: a tree of path elements ("f:spec", "k:{\"name\":\"c\"}", "."), its leaves the
// fields.
class FieldSet {
 public:
  // The fields of `object` (of the main resource, or of `subresource` "status").
  static FieldSet Of(const nlohmann::json& object, std::string_view subresource);
  static FieldSet FromFieldsV1(const nlohmann::json& fields);
  nlohmann::json ToFieldsV1() const;

  bool empty() const { return children_.empty() && !leaf_; }
  // Each field's path, in order.
  std::vector<std::vector<std::string>> Leaves() const;
  bool Contains(const std::vector<std::string>& path) const;
  void Insert(const std::vector<std::string>& path);
  void Erase(const std::vector<std::string>& path);

 private:
  void Collect(std::vector<std::string>& prefix, std::vector<std::vector<std::string>>& out) const;
  bool leaf_ = false;
  std::map<std::string, FieldSet> children_;
};

// The value at a field's path in `object`, or null when it has none.
const nlohmann::json* ValueAt(const nlohmann::json& object, const std::vector<std::string>& path);
// A path as upstream's conflict messages print it: .spec.containers[name="c"].image
std::string PathText(const std::vector<std::string>& path);

// The manager of a request: fieldManager, else the User-Agent's product ("kubectl"), else
// "unknown". Errors name an invalid fieldManager (more than 128 characters, or not printable).
StatusOr<std::string> ManagerOf(const std::string& field_manager, const std::string& user_agent);

// A create, update or patch by `manager` took `old` (null on create) to `object`: records it in
// object's metadata.managedFields (whatever the client sent there is replaced by the server's).
void RecordUpdate(const nlohmann::json* old, nlohmann::json& object, const std::string& manager,
                  const std::string& api_version, const std::string& subresource, const std::string& time);

// An apply by `manager` of `applied` to `current` (null: it creates the object), whose merge
// gave `merged`: checks conflicts (FailedPrecondition "conflict" → 409 with causes, see
// ConflictStatus), takes forced fields over, removes fields the manager no longer applies and
// no one else owns from `merged`, and records the ownership in merged's managedFields.
struct ApplyConflict {
  std::string manager, api_version, field;
  std::string operation, time, subresource;  // of the manager's entry
};
Status RecordApply(const nlohmann::json* current, const nlohmann::json& applied, nlohmann::json& merged,
                   const std::string& manager, const std::string& api_version, bool force, const std::string& time,
                   std::vector<ApplyConflict>* conflicts);
// The 409 body of an apply's conflicts, as kube-apiserver words it.
nlohmann::json ConflictStatus(const std::vector<ApplyConflict>& conflicts, std::string_view kind, std::string_view group,
                              const std::string& name);

}  // namespace arbiter::api
