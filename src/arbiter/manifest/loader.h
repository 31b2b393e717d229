// Loading Kubernetes manifests into model objects, as `arbiter plan` reads them
// (the `plan` interface README.md documents): YAML streams of documents separated by `---`, JSON objects, and
// `kind: List` objects with `items`, from several files or standard input. Every problem becomes
// one line naming the file, the document index, the object and the field; nothing throws.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"
#include "arbiter/manifest/decoder.h"
#include "arbiter/model/objects.h"

namespace arbiter::manifest {

struct InputFile {
  std::string name;     // shown in errors; "-" or "<stdin>" for standard input
  std::string content;
  // JSON written by a program (the API server's requests): string fields must be JSON strings.
  bool strict_strings = false;
};

// The most bytes `plan` reads from its input files together unless told otherwise.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t{1} << 30;

// Reads a file, or standard input for "-", refusing one larger than `max_bytes` (checked as it
// is read, so a device or a pipe that never ends is refused too).
StatusOr<InputFile> ReadInputFile(const std::string& path, uint64_t max_bytes = kDefaultMaxInputBytes);

// Where an object came from, for error messages.
struct Origin {
  std::string file;
  int document = 0;  // 1-based index of the document in its file
  int item = 0;      // 1-based index within a List, 0 if not in a List
  std::string kind;
  std::string object;  // "namespace/name" or "name"

  // "FILE: document N[, item M]: KIND OBJECT"
  std::string ToString() const;
};

template <typename T>
struct Sourced {
  T object;
  Origin origin;
};

struct ClusterObjects {
  std::vector<Sourced<model::Node>> nodes;
  std::vector<Sourced<model::Pod>> pods;
  std::vector<Sourced<model::PriorityClass>> priority_classes;
  std::vector<Sourced<model::PodDisruptionBudget>> pdbs;
  std::vector<Sourced<model::Namespace>> namespaces;
  // The scheduling.k8s.io Workload API.
  std::vector<Sourced<model::Workload>> workloads;
  std::vector<Sourced<model::PodGroup>> pod_groups;
  std::vector<Sourced<model::CompositePodGroup>> composite_pod_groups;
  std::optional<Sourced<model::SchedulerConfig>> config;
  // Node-pressure eviction: what pods use, and the kubelets' thresholds.
  std::vector<Sourced<model::PodMetrics>> pod_metrics;
  std::optional<Sourced<model::KubeletConfig>> kubelet_config;
  // Storage: what the volume plugins read.
  std::vector<Sourced<model::PersistentVolumeClaim>> pvcs;
  std::vector<Sourced<model::PersistentVolume>> pvs;
  std::vector<Sourced<model::StorageClass>> storage_classes;
  std::vector<Sourced<model::CsiNode>> csi_nodes;
  // The workload controllers' objects (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet;
  // batch/v1 Job, CronJob), as JSON: what the controllers read. `plan` expands them into the
  // pods the controllers would create (controllers/expand.h).
  std::vector<Sourced<nlohmann::json>> workload_controllers;
  // Each pod's controller reference (metadata.ownerReferences' entry with controller: true), by
  // "namespace/name": which pods of the input a workload already has.
  struct ControllerRef {
    std::string kind, name, uid;
  };
  std::map<std::string, ControllerRef> pod_controllers;
  // Objects of kinds scheduling does not read (a Service, a ConfigMap, a custom resource): read,
  // checked against the schema where there is one, and noted.
  std::vector<Origin> skipped;
};

// Adds a copy of every object of `from` to `into`, after those it holds: the objects of inputs
// decoded one at a time (DecodeJson), gathered as Load would have read them in that order. Of the
// singletons (config, kubelet_config), one `into` already holds is kept.
void Append(ClusterObjects& into, const ClusterObjects& from);

struct LoadResult {
  ClusterObjects objects;
  std::vector<std::string> errors;  // one line per problem; empty on success
  std::vector<std::string> warnings;  // unknown fields, with UnknownFields::kWarn
  bool ok() const { return errors.empty(); }
};

// Which readers read the text: the fast ones (json_text.h, yaml_text.h), which hand what they are
// not sure of to the reference readers, or the reference readers alone (yaml-cpp; nlohmann's
// into yaml-cpp trees for JSON). The tests compare the two.
enum class TextReader { kFast, kReference };

// Decodes every document of every file, in order. Also checks what needs the whole input:
// duplicate objects, pods bound to nodes that are not in the input, pods naming PodGroups that
// are not in the input, members of one PodGroup with different schedulerNames, and the parent
// links of the group hierarchy (missing parents, cycles, more than
// model::kMaxGroupHierarchyDepth levels).
//
// Every document is checked against its kind's schema too (schema_check.h): a field the kind
// does not have is an error naming it, a warning, or nothing, as `unknown` says (kubectl's
// --validate=strict|warn|ignore).
//
// `expand`, if given, runs between the decoding and the whole-input checks, on a clean decode:
// what it adds (`plan`'s pods of workloads, controllers/expand.h) is checked with the rest.
LoadResult Load(const std::vector<InputFile>& files, TextReader reader = TextReader::kFast,
                UnknownFields unknown = UnknownFields::kError,
                const std::function<void(LoadResult&)>& expand = nullptr);
// What Load does once every input is decoded (and expanded): drops the fields of disabled
// features and makes the checks that need the whole input, adding their problems to `result`.
void CheckDecoded(LoadResult& result);
// Decodes every document on its own, without the checks that need the whole input (the API
// server validates one object at a time and resolves references against its store).
LoadResult DecodeEach(const std::vector<InputFile>& files, TextReader reader = TextReader::kFast);
// The profile of the KubeSchedulerConfiguration in the file at `path` (one profile), as the
// commands and the bench read a --config file: InvalidArgument, naming `what` ("--config") and
// the file, when it cannot be read, does not decode strictly, or holds no such object.
StatusOr<model::SchedulerConfig> LoadSchedulerConfigFile(const std::string& what, const std::string& path);
// Decodes one object held as JSON (as the API server stores it), as DecodeEach decodes a file
// named `name` holding its text, without printing and parsing it again.
LoadResult DecodeJson(const std::string& name, const nlohmann::json& body, bool strict_strings = false);

// A metadata.labels object (as stored: validated) as a LabelMap; entries that are not strings and
// a `labels` that is null or not an object give none.
model::LabelMap LabelMapOf(const nlohmann::json* labels);
// A metav1.LabelSelector held as JSON (null: nullopt), with the decoder's checks; errors name
// `path` and the field.
StatusOr<std::optional<model::LabelSelector>> DecodeLabelSelectorJson(const nlohmann::json& selector,
                                                                     const std::string& path);

}  // namespace arbiter::manifest
