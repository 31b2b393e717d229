// An exclusive lock on a directory, held for the life of the process (or of the DirLock): a
// second `arbiter serve` on the same --data-dir is refused instead of sharing the store.
#pragma once

#include <string>

#include "arbiter/base/status.h"

namespace arbiter {

class DirLock {
 public:
  // Locks `dir`/lock with flock(LOCK_EX | LOCK_NB). The lock file records the holder's pid,
  // which the error names when another process holds it.
  static StatusOr<DirLock> Acquire(const std::string& dir);
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&& o) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace arbiter
