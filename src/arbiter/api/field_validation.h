// Server-side field validation and the Status of an invalid object, as kube-apiserver does them:
//   * fields the kind's schema (schema.h) does not have are dropped; `fieldValidation=Strict`
//     rejects the request with 400 naming every one, `Warn` (the default) answers one Warning
//     header each, `Ignore` drops them silently;
//   * fields the schema marks +required must be present (FieldValueRequired);
//   * a value of the wrong JSON type (a string where an integer belongs) fails the request;
//   * an invalid object is answered 422 with details.causes, one per field error
//     ({reason, message, field}) and details.kind the object's kind.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include "arbiter/base/json.h"

#include "arbiter/base/status.h"

namespace arbiter::api {

using Json = nlohmann::json;

struct FieldError {
  std::string reason;  // a field.ErrorType: FieldValueRequired, FieldValueInvalid, ...
  std::string field;   // the JSON path: spec.containers[0].image
  std::string detail;  // what follows the field in the message: "Required value"
};

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The fieldValidation query parameter ("" is the default, Warn). Errors name the value.
StatusOr<FieldValidation> ParseFieldValidation(const std::string& value);

struct SchemaCheck {
  std::vector<std::string> unknown;   // paths of fields the schema does not have, in document order
  std::vector<FieldError> missing;    // +required fields that are absent
  // Values of the wrong JSON type ("spec.priority: want an integer, got string"): the body
  // cannot be decoded at all, a 400 as kube-apiserver answers it.
  std::vector<std::string> wrong_types;
};

// Checks `object` against message `d`, removing the unknown fields from it. The top level may
// also carry apiVersion and kind.
SchemaCheck CheckAgainstSchema(Json& object, const google::protobuf::Descriptor* d);

// The field errors of a message in kube-apiserver's invalid form,
// `<Kind> "<name>" is invalid: <field>: <detail>; <field>: <detail>`.
std::vector<FieldError> FieldErrorsOf(std::string_view message);

// The 422 Status body of an invalid object: message, reason Invalid, details with the kind,
// group, name and one cause per error.
Json InvalidStatusBody(const std::string& message, std::string_view kind, std::string_view group,
                       const std::string& name, const std::vector<FieldError>& errors);

}  // namespace arbiter::api
