// The commands' log lines, klog-like: severity, UTC time, message and key="value" pairs, one
// write per line (lines come from several threads).
#pragma once

#include <iosfwd>
#include <string>

namespace arbiter::cmd {

void Log(std::ostream& err, char severity, const std::string& msg, const std::string& kv = "");

}  // namespace arbiter::cmd
