// Writing a report file (`plan --html`, `bench --html`).
#pragma once

#include <string>

#include "arbiter/base/status.h"

namespace arbiter::cmd {

// Writes `page` to `path` whole: into a temporary file beside it, then renamed over it, so that a
// reader never sees half a report and a failure leaves any earlier file as it was.
Status WriteHtml(const std::string& path, const std::string& page);

}  // namespace arbiter::cmd
