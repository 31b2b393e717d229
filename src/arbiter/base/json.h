// nlohmann::json for every Arbiter source: include this, never <nlohmann/json.hpp> directly.
//
// nlohmann-json is a header-only template library: every translation unit that calls dump(),
// parse() or a member of basic_json would otherwise compile its own copy of those functions at
// -O2 with debug information, and the linker would throw all but one away. Most of Arbiter's
// sources use JSON, so those copies were a fifth of the build (docs/ci.md). The explicit
// instantiation declarations below tell every includer that the members are compiled once, in
// base/json.cc; calls may still be inlined where the optimiser wants.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

extern template class nlohmann::basic_json<>;
extern template class nlohmann::detail::serializer<nlohmann::json>;
extern template class nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
extern template class nlohmann::detail::json_sax_dom_callback_parser<nlohmann::json>;
extern template class nlohmann::detail::lexer<nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;
extern template class nlohmann::detail::lexer<nlohmann::json,
                                              nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>;
extern template class nlohmann::detail::parser<nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;
extern template class nlohmann::detail::parser<nlohmann::json,
                                               nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>;
