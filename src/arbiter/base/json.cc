// The one compiled copy of nlohmann::json's members (base/json.h explains why).
#include "arbiter/base/json.h"

template class nlohmann::basic_json<>;
template class nlohmann::detail::serializer<nlohmann::json>;
template class nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
template class nlohmann::detail::json_sax_dom_callback_parser<nlohmann::json>;
template class nlohmann::detail::lexer<nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;
template class nlohmann::detail::lexer<nlohmann::json, nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>;
template class nlohmann::detail::parser<nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;
template class nlohmann::detail::parser<nlohmann::json, nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>;
