// Object names, labels and annotations as kube-apiserver validates them (apimachinery's
// ValidateObjectMeta with each kind's name function): one table of kinds, shared by the API
// (every kind it serves, on every write) and by the manifest decoder that `plan` reads with.
//
//   * A name follows its kind's rule: an RFC 1123 subdomain (most kinds), an RFC 1123 label
//     (Namespace), an RFC 1035 label (Service), or a path segment (the RBAC kinds: anything but
//     "." and "..", without '/' or '%'); a CronJob's name has at most 52 characters (its Jobs'
//     names add 11). Every name has at most 253 bytes.
//   * A label key is a qualified name (an optional DNS-subdomain prefix and '/', then at most 63
//     alphanumerics, '-', '_' or '.', starting and ending alphanumeric); a value is empty or at
//     most 63 such characters.
//   * Annotation keys are qualified names; keys and values together hold at most 256 KiB.
//
// Messages are upstream's, so that a client sees what kube-apiserver would answer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"
#include "arbiter/base/rng.h"

namespace arbiter::manifest {

enum class NameRule { kDnsSubdomain, kDnsLabel, kDns1035Label, kPathSegment };

// The five characters a generateName gets (apiserver's names.SimpleNameGenerator: consonants
// and digits that spell no words), drawn from `rng`.
std::string GeneratedNameSuffix(Rng& rng);
// A metadata.uid as the API server gives one: a version-4 UUID, drawn from `rng`.
std::string GeneratedUid(Rng& rng);

// The rule `kind`'s metadata.name follows (kDnsSubdomain for a kind the table does not name).
NameRule NameRuleOf(std::string_view kind);
// The longest name `kind` allows (253, or 52 for CronJob).
size_t MaxNameLength(std::string_view kind);

// Each returns the reasons `s` is invalid (upstream's wording), none when it is valid.
std::vector<std::string> NameProblems(NameRule rule, std::string_view s);
std::vector<std::string> QualifiedNameProblems(std::string_view s);
std::vector<std::string> LabelValueProblems(std::string_view s);

inline constexpr size_t kMaxAnnotationBytes = 256 * 1024;  // TotalAnnotationSizeLimitB

// One invalid field, as a Status cause: "metadata.name: Invalid value: \"Bad\": a lowercase ...".
struct FieldProblem {
  std::string field;   // metadata.labels
  std::string reason;  // FieldValueInvalid, FieldValueTooLong, ...
  std::string message;
};

// The problems of a wire object's metadata (name by `kind`'s rule, namespace, labels,
// annotations). `metadata` may be absent or not an object (then only its shape is a problem).
std::vector<FieldProblem> ObjectMetaProblems(std::string_view kind, const nlohmann::json& metadata, bool check_name);

}  // namespace arbiter::manifest
