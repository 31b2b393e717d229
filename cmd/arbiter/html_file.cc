#include "html_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace arbiter::cmd {

Status WriteHtml(const std::string& path, const std::string& page) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return InvalidArgument(std::string("cannot write: ") + std::strerror(errno));
    f.write(page.data(), static_cast<std::streamsize>(page.size()));
    f.flush();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return Internal(std::string("write failed: ") + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Internal("cannot replace the file: " + ec.message());
  }
  return Status::Ok();
}

}  // namespace arbiter::cmd
