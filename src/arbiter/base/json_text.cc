#include "arbiter/base/json_text.h"

#include <cstring>

namespace arbiter::base::json_text {

size_t EndOfValue(std::string_view text, size_t at) {
  int depth = 0;
  for (size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      // To the closing quote: the next quote not escaped (an odd run of backslashes before it
      // escapes it). memchr, as most of a body's bytes are inside strings.
      for (;;) {
        const void* q = std::memchr(text.data() + i + 1, '"', text.size() - i - 1);
        if (q == nullptr) return std::string_view::npos;
        i = static_cast<size_t>(static_cast<const char*>(q) - text.data());
        size_t slashes = 0;
        while (text[i - 1 - slashes] == '\\') ++slashes;
        if (slashes % 2 == 0) break;
      }
      if (depth == 0) return i + 1;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
      if (depth < 0) return i;  // the end of a scalar member that closes its object
    } else if (depth == 0 && c == ',') {
      return i;
    }
  }
  return depth == 0 ? text.size() : std::string_view::npos;
}

namespace {

// One member of a compact object: its key with the quotes, and where its value is.
struct MemberAt {
  std::string_view quoted_key;
  size_t begin = 0;       // the key's opening quote
  size_t value_begin = 0;
  size_t value_end = 0;   // one past the value
};

// Calls `fn(member)` for each member of the object `text` in order until it returns
// false. False when the text is not a compact object.
template <typename Fn>
bool ForEachMember(std::string_view text, Fn&& fn) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  size_t at = 1;
  const size_t last = text.size() - 1;
  while (at < last) {
    if (text[at] != '"') return false;
    const size_t key_end = EndOfValue(text, at);
    if (key_end == std::string_view::npos || key_end >= last || text[key_end] != ':') return false;
    const size_t value_end = EndOfValue(text, key_end + 1);
    if (value_end == std::string_view::npos || value_end > last || value_end == key_end + 1) return false;
    if (!fn(MemberAt{text.substr(at, key_end - at), at, key_end + 1, value_end})) return true;
    if (value_end == last) break;
    if (text[value_end] != ',') return false;
    at = value_end + 1;
  }
  return true;
}

bool IsKey(std::string_view quoted, std::string_view key) {
  return quoted.size() == key.size() + 2 && quoted.substr(1, key.size()) == key;
}

}  // namespace

std::optional<std::string_view> Member(std::string_view text, std::string_view key) {
  std::optional<std::string_view> found;
  const bool ok = ForEachMember(text, [&](const MemberAt& m) {
    if (!IsKey(m.quoted_key, key)) return true;
    found = text.substr(m.value_begin, m.value_end - m.value_begin);
    return false;
  });
  if (!ok) return std::nullopt;
  return found;
}

std::optional<std::string> WithNestedMember(std::string_view text, std::string_view outer, std::string_view key,
                                            std::string_view value) {
  std::optional<MemberAt> o;
  if (!ForEachMember(text, [&](const MemberAt& m) {
        if (!IsKey(m.quoted_key, outer)) return true;
        o = m;
        return false;
      }) ||
      !o) {
    return std::nullopt;
  }
  const std::string_view inner = text.substr(o->value_begin, o->value_end - o->value_begin);
  // Where the member goes: its own value's range when present; otherwise before the first key
  // that sorts after it (std::map's order: bytes of the unescaped key).
  size_t cut_begin = std::string_view::npos, cut_end = 0;
  bool replace = false, escaped = false;
  const bool ok = ForEachMember(inner, [&](const MemberAt& m) {
    const std::string_view k = m.quoted_key.substr(1, m.quoted_key.size() - 2);
    if (k.find('\\') != std::string_view::npos) {
      escaped = true;
      return false;
    }
    if (k == key) {
      replace = true;
      cut_begin = m.value_begin;
      cut_end = m.value_end;
      return false;
    }
    if (k > key) {
      cut_begin = cut_end = m.begin;
      return false;
    }
    return true;
  });
  if (!ok || escaped) return std::nullopt;
  std::string out;
  out.reserve(text.size() + key.size() + value.size() + 4);
  const size_t base = o->value_begin;
  if (replace) {
    out.append(text.substr(0, base + cut_begin));
    out.append(value);
    out.append(text.substr(base + cut_end));
    return out;
  }
  std::string member = "\"";
  member.append(key);
  member += "\":";
  member.append(value);
  if (cut_begin != std::string_view::npos) {  // before a later key
    out.append(text.substr(0, base + cut_begin));
    out.append(member);
    out += ',';
    out.append(text.substr(base + cut_begin));
  } else {  // last: before the closing brace
    const size_t close = base + inner.size() - 1;
    out.append(text.substr(0, close));
    if (inner.size() > 2) out += ',';
    out.append(member);
    out.append(text.substr(close));
  }
  return out;
}

}  // namespace arbiter::base::json_text
