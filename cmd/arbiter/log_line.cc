#include "log_line.h"

#include <mutex>
#include <ostream>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/control_loop.h"

namespace arbiter::cmd {

void Log(std::ostream& err, char severity, const std::string& msg, const std::string& kv) {
  static std::mutex mu;
  std::string line;
  line.reserve(48 + msg.size() + kv.size());
  line += severity;
  line += ' ';
  line += FormatRfc3339(SystemClock().Now());
  line += " \"";
  line += msg;
  line += '"';
  if (!kv.empty()) line += ' ' + kv;
  line += '\n';
  // One write per line (stderr is unbuffered: each insertion would be a system call of its own).
  std::lock_guard<std::mutex> lock(mu);
  err.write(line.data(), static_cast<std::streamsize>(line.size()));
  err.flush();
}

Status RunPassAndReport(controlplane::ControlLoop& loop, std::ostream& err, const char* failed, std::string& last_error) {
  Status s;
  try {
    s = loop.RunOnce();
  } catch (const std::exception& e) {
    // An object of an unexpected shape in the store: report it, keep going, try again.
    s = Internal(std::string("control loop: ") + e.what());
  }
  if (!s.ok() && s.message() != last_error) Log(err, 'E', failed, "err=\"" + s.message() + "\"");
  last_error = s.ok() ? "" : s.message();
  return s;
}

}  // namespace arbiter::cmd
