// The commands' log lines, klog-like: severity, UTC time, message and key="value" pairs, one
// write per line (lines come from several threads).
#pragma once

#include <iosfwd>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::controlplane {
class ControlLoop;
}

namespace arbiter::cmd {

void Log(std::ostream& err, char severity, const std::string& msg, const std::string& kv = "");

// One pass of `loop`: an exception (an object of an unexpected shape) becomes an error status,
// and an error is logged as `failed` once until it changes (`last_error` keeps the last one).
Status RunPassAndReport(controlplane::ControlLoop& loop, std::ostream& err, const char* failed, std::string& last_error);

}  // namespace arbiter::cmd
