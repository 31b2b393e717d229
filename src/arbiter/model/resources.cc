// Resource arithmetic, kept in one place so every caller agrees on units.
#include "arbiter/model/resources.h"

#include <algorithm>

namespace arbiter::model {

int64_t Resources::Scalar(std::string_view name) const {
  for (const auto& [n, v] : scalars) {
    if (n == name) return v;
  }
  return 0;
}

void Resources::SetScalar(std::string_view name, int64_t v) {
  auto it = std::lower_bound(scalars.begin(), scalars.end(), name,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  if (it != scalars.end() && it->first == name) {
    it->second = v;
  } else {
    scalars.emplace(it, std::string(name), v);
  }
}

void Resources::Set(std::string_view name, int64_t v) {
  if (name == kResourceCpu) {
    milli_cpu = v;
  } else if (name == kResourceMemory) {
    memory = v;
  } else if (name == kResourceEphemeralStorage) {
    ephemeral_storage = v;
  } else if (name == kResourcePods) {
    pods = v;
  } else {
    SetScalar(name, v);
  }
}

int64_t Resources::Get(std::string_view name) const {
  if (name == kResourceCpu) return milli_cpu;
  if (name == kResourceMemory) return memory;
  if (name == kResourceEphemeralStorage) return ephemeral_storage;
  if (name == kResourcePods) return pods;
  return Scalar(name);
}

void Resources::Add(const Resources& o) {
  milli_cpu = SaturatingAdd(milli_cpu, o.milli_cpu);
  memory = SaturatingAdd(memory, o.memory);
  ephemeral_storage = SaturatingAdd(ephemeral_storage, o.ephemeral_storage);
  pods = SaturatingAdd(pods, o.pods);
  for (const auto& [n, v] : o.scalars) SetScalar(n, SaturatingAdd(Scalar(n), v));
}

void Resources::Sub(const Resources& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  pods -= o.pods;
  for (const auto& [n, v] : o.scalars) SetScalar(n, Scalar(n) - v);
}

void Resources::Max(const Resources& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  pods = std::max(pods, o.pods);
  for (const auto& [n, v] : o.scalars) SetScalar(n, std::max(Scalar(n), v));
}

bool Resources::IsZero() const {
  if (milli_cpu != 0 || memory != 0 || ephemeral_storage != 0 || pods != 0) return false;
  return std::all_of(scalars.begin(), scalars.end(), [](const auto& e) { return e.second == 0; });
}

}  // namespace arbiter::model
