#include "arbiter/manifest/names.h"

#include <cstdio>

#include <utility>

namespace arbiter::manifest {

namespace {

using Json = nlohmann::json;

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Alnum(char c) { return LowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

constexpr std::string_view kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr std::string_view kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view k1035Message =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view kQualifiedMessage =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr std::string_view kLabelValueMessage =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!LowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsSubdomain(std::string_view s) {
  if (s.empty()) return false;
  for (size_t at = 0;;) {
    const size_t dot = s.find('.', at);
    if (!IsDnsLabel(s.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at))) return false;
    if (dot == std::string_view::npos) return true;
    at = dot + 1;
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool IsQualifiedPart(std::string_view s) {
  if (s.empty() || !Alnum(s.front()) || !Alnum(s.back())) return false;
  for (char c : s) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::vector<std::string> SubdomainProblems(std::string_view s) {
  std::vector<std::string> out;
  if (s.size() > 253) out.emplace_back("must be no more than 253 characters");
  if (!IsSubdomain(s)) out.emplace_back(kSubdomainMessage);
  return out;
}

struct KindRule {
  std::string_view kind;
  NameRule rule;
};
// The kinds whose names are not RFC 1123 subdomains (every other kind's are): ValidateNamespaceName,
// ValidateServiceName and ValidateRBACName in kube-apiserver's validation packages.
constexpr KindRule kRules[] = {
    {"Namespace", NameRule::kDnsLabel},
    {"Service", NameRule::kDns1035Label},
    {"Role", NameRule::kPathSegment},
    {"ClusterRole", NameRule::kPathSegment},
    {"RoleBinding", NameRule::kPathSegment},
    {"ClusterRoleBinding", NameRule::kPathSegment},
};

}  // namespace

std::string GeneratedNameSuffix(Rng& rng) {
  static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string suffix;
  for (int i = 0; i < 5; ++i) suffix += kChars[rng.Uniform(sizeof kChars - 1)];
  return suffix;
}

std::string GeneratedUid(Rng& rng) {
  const uint64_t a = rng.Next(), b = rng.Next();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

NameRule NameRuleOf(std::string_view kind) {
  for (const KindRule& r : kRules) {
    if (r.kind == kind) return r.rule;
  }
  return NameRule::kDnsSubdomain;
}

size_t MaxNameLength(std::string_view kind) {
  // ValidateCronJobName: the Jobs it creates are named NAME-<11 characters of schedule time>.
  return kind == "CronJob" ? 52 : 253;
}

std::vector<std::string> NameProblems(NameRule rule, std::string_view s) {
  std::vector<std::string> out;
  switch (rule) {
    case NameRule::kDnsSubdomain:
      return SubdomainProblems(s);
    case NameRule::kDnsLabel:
      if (s.size() > 63) out.emplace_back("must be no more than 63 characters");
      if (!IsDnsLabel(s)) out.emplace_back(kLabelMessage);
      return out;
    case NameRule::kDns1035Label:
      if (s.size() > 63) out.emplace_back("must be no more than 63 characters");
      if (!IsDnsLabel(s) || !(s.front() >= 'a' && s.front() <= 'z')) out.emplace_back(k1035Message);
      return out;
    case NameRule::kPathSegment:
      // IsValidPathSegmentName; the 253-byte bound is every name's (Arbiter's store keys).
      if (s == "." || s == "..") out.emplace_back("may not be '" + std::string(s) + "'");
      if (s.find('/') != std::string_view::npos) out.emplace_back("may not contain '/'");
      if (s.find('%') != std::string_view::npos) out.emplace_back("may not contain '%'");
      if (s.size() > 253) out.emplace_back("must be no more than 253 characters");
      for (char c : s) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out.emplace_back("may not contain control characters");
          break;
        }
      }
      return out;
  }
  return out;
}

std::vector<std::string> QualifiedNameProblems(std::string_view s) {
  std::vector<std::string> out;
  std::string_view name = s;
  if (const size_t slash = s.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) {
      out.emplace_back("prefix part must be non-empty");
    } else {
      for (const std::string& p : SubdomainProblems(prefix)) out.push_back("prefix part " + p);
    }
    if (name.find('/') != std::string_view::npos) {
      out.emplace_back(
          "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
          "'example.com/MyName')");
      return out;
    }
  }
  if (name.empty()) {
    out.emplace_back("name part must be non-empty");
    return out;
  }
  if (name.size() > 63) out.emplace_back("name part must be no more than 63 characters");
  if (!IsQualifiedPart(name)) out.emplace_back(kQualifiedMessage);
  return out;
}

std::vector<std::string> LabelValueProblems(std::string_view s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  if (s.size() > 63) out.emplace_back("must be no more than 63 characters");
  if (!IsQualifiedPart(s)) out.emplace_back(kLabelValueMessage);
  return out;
}

std::vector<FieldProblem> ObjectMetaProblems(std::string_view kind, const Json& metadata, bool check_name) {
  std::vector<FieldProblem> out;
  // Upstream quotes a value as Go's %q does; JSON's quoting agrees for what names hold.
  auto invalid = [&](const std::string& field, std::string_view value, const std::string& why) {
    out.push_back({field, "FieldValueInvalid", field + ": Invalid value: " + Json(std::string(value)).dump() + ": " + why});
  };
  if (!metadata.is_object()) {
    out.push_back({"metadata", "FieldValueRequired", "metadata: Required value"});
    return out;
  }
  if (check_name) {
    const auto name = metadata.find("name");
    if (name != metadata.end() && name->is_string()) {
      const std::string& n = name->get_ref<const std::string&>();
      std::vector<std::string> problems = NameProblems(NameRuleOf(kind), n);
      if (const size_t max = MaxNameLength(kind); max < 253 && n.size() > max && problems.empty()) {
        problems.push_back("must be no more than " + std::to_string(max) + " characters");
      }
      for (const std::string& p : problems) invalid("metadata.name", n, p);
    } else if (name != metadata.end() && !name->is_null()) {
      out.push_back({"metadata.name", "FieldValueInvalid", "metadata.name: Invalid value: must be a string"});
    }
  }
  if (const auto labels = metadata.find("labels"); labels != metadata.end() && !labels->is_null()) {
    if (!labels->is_object()) {
      out.push_back({"metadata.labels", "FieldValueInvalid", "metadata.labels: Invalid value: must be a map of strings"});
    } else {
      for (const auto& [k, v] : labels->items()) {
        for (const std::string& p : QualifiedNameProblems(k)) invalid("metadata.labels", k, p);
        if (!v.is_string()) {
          invalid("metadata.labels", k, "a label value must be a string");
          continue;
        }
        for (const std::string& p : LabelValueProblems(v.get_ref<const std::string&>())) {
          invalid("metadata.labels", v.get_ref<const std::string&>(), p);
        }
      }
    }
  }
  if (const auto notes = metadata.find("annotations"); notes != metadata.end() && !notes->is_null()) {
    if (!notes->is_object()) {
      out.push_back({"metadata.annotations", "FieldValueInvalid", "metadata.annotations: Invalid value: must be a map of strings"});
    } else {
      size_t total = 0;
      for (const auto& [k, v] : notes->items()) {
        std::string lower = k;
        for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        for (const std::string& p : QualifiedNameProblems(lower)) invalid("metadata.annotations", k, p);
        total += k.size() + (v.is_string() ? v.get_ref<const std::string&>().size() : v.dump().size());
      }
      if (total > kMaxAnnotationBytes) {
        out.push_back({"metadata.annotations", "FieldValueTooLong",
                       "metadata.annotations: Too long: may not be more than " + std::to_string(kMaxAnnotationBytes) +
                           " bytes"});
      }
    }
  }
  return out;
}

}  // namespace arbiter::manifest
