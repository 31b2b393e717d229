#include "arbiter/base/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace arbiter {

StatusOr<DirLock> DirLock::Acquire(const std::string& dir) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable(path + ": cannot be opened: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int why = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (why == EWOULDBLOCK) {
      std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      return FailedPrecondition(dir + " is in use by another arbiter serve" +
                                (holder.empty() ? std::string() : " (pid " + holder + ")") +
                                ": one server per data directory");
    }
    return Unavailable(path + ": cannot be locked: " + std::strerror(why));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    const ssize_t w = ::pwrite(fd, pid.data(), pid.size(), 0);
    (void)w;  // the pid is only a hint for the error message of a second server
  }
  return DirLock(fd);
}

DirLock& DirLock::operator=(DirLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace arbiter
