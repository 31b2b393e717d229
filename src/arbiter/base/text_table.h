// Aligned text tables, as the CLI prints them (kubectl-style for `plan`, `nomad job plan`-style
// for Nomad mode): every column as wide as its widest cell, `gap` spaces between columns, no
// trailing spaces.
#pragma once

#include <string>
#include <vector>

namespace arbiter {

std::string TextTable(const std::vector<std::vector<std::string>>& rows, size_t gap);

}  // namespace arbiter
