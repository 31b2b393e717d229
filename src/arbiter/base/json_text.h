// Reading and changing compact JSON text (nlohmann's dump(): no spaces outside strings, object
// members in key order) without building a tree.
//
// A stored version keeps its text (store/body.h); a reader that wants one member of it, or a
// writer that changes one scalar of it, need not parse the whole body and print it again. These
// functions only cut and splice: they check as much of the syntax as they walk, and answer
// "cannot" (npos, nullopt) for any text that is not such a value, so that the caller falls back
// to the tree.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace arbiter::base::json_text {

// The end of the JSON value that starts at `at` in compact text: one past its last character
// (for a scalar that ends its object or array, the index of the closing bracket), or npos when the
// text ends first.
size_t EndOfValue(std::string_view text, size_t at);

// The value of member `key` of the object `text` (itself a compact JSON object), as text; nullopt
// when the object has no such member or the text is not a compact object. A key written with
// escapes is compared as written.
std::optional<std::string_view> Member(std::string_view text, std::string_view key);

// The object `text` with member `key` of its member object `outer` set to `value` (compact JSON
// text), inserted in key order when absent, the rest of the text unchanged: what dump() of the
// tree with that change would print. nullopt when `text` is not a compact object, `outer` is
// absent or not an object, or a key of `outer` is written with escapes (whose order the text
// does not show).
std::optional<std::string> WithNestedMember(std::string_view text, std::string_view outer, std::string_view key,
                                            std::string_view value);

}  // namespace arbiter::base::json_text
