#include "arbiter/state/resource_fit.h"

namespace arbiter::state {

ResourceShortage CheckResourceFit(const model::Resources& req, const model::Resources& alloc,
                                  const model::Resources& used, int64_t pod_count) {
  ResourceShortage s;
  s.too_many_pods = pod_count + 1 > alloc.pods;
  auto short_of = [&](int64_t want, int64_t have, int64_t in_use) {
    if (!ShortOf(want, have, in_use)) return false;
    if (want > have) s.unresolvable = true;
    return true;
  };
  s.cpu = short_of(req.milli_cpu, alloc.milli_cpu, used.milli_cpu);
  s.memory = short_of(req.memory, alloc.memory, used.memory);
  s.ephemeral_storage = short_of(req.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage);
  for (const auto& [name, want] : req.scalars) {  // sorted by name: deterministic reasons
    if (short_of(want, alloc.Scalar(name), used.Scalar(name))) s.scalars.push_back(name);
  }
  return s;
}

}  // namespace arbiter::state
